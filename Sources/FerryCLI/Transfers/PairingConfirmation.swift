import FerrySecurity
import FerrySession
import FerryTransfer
import FerryWire

/// The sender's half of the pairing: before anything is offered to a receiver it has not pinned, the person at
/// the sending terminal confirms that the receiver shows the same 6-digit code (`ferry send`, `ferry trust add`).
///
/// The code is derived from both TLS handshakes (PROTOCOL.md 7): a man in the middle holds two links with two
/// different codes, so equal codes on both screens mean the receiver is who it seems. Until the person says yes
/// nothing of the transfer leaves, not even the file names. One question at a time, each until `timeout`; no
/// answer, end of input, or anything but yes is a no.
struct PairingConfirmation: Sendable {
    /// How the person answered about one peer.
    enum Answer: Equatable, Sendable {
        case yes
        /// Yes, and pin the peer from now on (as the receiver's `a`).
        case always
        /// No, or anything that is not yes.
        case no
        /// Nothing within `timeout`.
        case timedOut
        /// End of input (Ctrl-D) before an answer.
        case inputEnded
    }

    /// Where questions and their echoes go (stderr, above any bars).
    let show: @Sendable ([String]) -> Void
    /// How long one question waits for its answer.
    var timeout: Duration = .seconds(60)

    /// Asks whether `peer` shows its pairing code; reads one line from a fresh standard-input stream.
    /// With `pinning`, the question is whether to trust the peer (`ferry trust add`): y/N, and yes pins it.
    func ask(_ peer: PeerInfo, pinning: Bool = false) async -> Answer {
        show([Self.question(peer, pinning: pinning)])
        let lines = StandardInputLines.stream()
        let timeout = self.timeout
        let answer = await withTaskGroup(of: Answer?.self) { group in
            group.addTask {
                for await line in lines {
                    switch OfferPrompt.answer(line) {
                    case .accept: return .yes
                    // Trusting from now on means a code was compared: a link without one is a yes for now only.
                    case .always: return peer.pairingCode == nil ? .yes : .always
                    case .deny: return .no
                    }
                }
                return Task.isCancelled ? nil : .inputEnded
            }
            group.addTask {
                guard (try? await Task.sleep(for: timeout)) != nil else { return nil }
                return .timedOut
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .no
        }
        return answer
    }

    /// `Does bob show 123 456? [y]es, [n]o, [a]lways (yes, and trust bob from now on)`
    static func question(_ peer: PeerInfo, pinning: Bool = false) -> String {
        let name = TerminalText.escape(peer.displayName)
        let choices =
            pinning
            ? "[y/N] (y trusts \(name) from now on)" : "[y]es, [n]o, [a]lways (yes, and trust \(name) from now on)"
        guard let code = peer.pairingCode else {
            // Nothing to compare, so nothing to pin on: y sends this once (`ferry trust add` refuses before asking).
            return "\(name) (device \(peer.deviceID)) has no pairing code to compare (an older ferry?). "
                + "Send to it anyway, without trusting it? [y/N]"
        }
        return "Does \(name) show \(PairingCode.readable(code))? \(choices)"
    }

    /// Why nothing goes to a peer the person did not confirm: the summary's failure for it.
    static func refusal(_ answer: Answer) -> String {
        switch answer {
        case .timedOut: "its pairing code was not confirmed within a minute: nothing was sent to it"
        case .inputEnded: "its pairing code was not confirmed (end of input): nothing was sent to it"
        default: "you did not confirm its pairing code: nothing was sent to it"
        }
    }
}
