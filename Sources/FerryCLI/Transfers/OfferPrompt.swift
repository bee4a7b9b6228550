import FerrySecurity
import FerrySession
import FerryTransfer
import FerryWire

/// Asks the user about each incoming offer on the terminal (`ferry receive --accept ask`).
///
/// Offers can arrive while one is being asked about, and nobody may be at the keyboard: offers are asked one at
/// a time in arrival order, each until the engine's deadline, after which the engine denies it by itself and
/// the prompt moves on. Everything about the offer is peer-controlled and escaped: a file named
/// `invoice.pdf\u{1B}[2K` must not rewrite the line that asks whether to accept it.
struct OfferPrompt: Sendable {
    /// Files listed in a prompt before "... and N more".
    static let listedFiles = 10

    /// What the person answered.
    enum Answer: Equatable, Sendable {
        case deny
        case accept
        /// Accept, and trust the sender from now on (pin its device ID under its name).
        case always
    }

    /// What the receive loop tells the prompt.
    enum Update: Sendable {
        /// An offer to ask about; a LocalSend device's with what identifies it (`LocalSendContact`).
        case offer(IncomingOffer, LocalSendContact? = nil)
        /// The engine reported an end for this offer (denied, cancelled), and why: stop asking about it.
        case gone(TransferID, PeerID, reason: String)
    }

    private enum Input: Sendable {
        case update(Update)
        case line(String)
        case expired(TransferID, PeerID)
        case inputEnded
    }

    /// Where the prompt is shown (stderr, through the reporter so that bars stay below).
    let show: @Sendable ([String]) -> Void
    /// A line that arrives sooner than this after a prompt was shown was typed for what was on the screen before
    /// (an offer that just expired, a doubled Enter): it is ignored, so "a" meant for a friend's offer never
    /// accepts and pins the stranger's offer queued behind it.
    var minimumAnswerDelay: Duration = .milliseconds(700)

    /// Asks about each offer from `updates`, reading answers from `lines`, until `updates` ends or the task is
    /// cancelled; `respond` delivers each answer to the engine.
    func run(
        updates: AsyncStream<Update>, lines: AsyncStream<String>,
        respond: @escaping @Sendable (IncomingOffer, Answer) async -> Void
    ) async {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let forwarders = [
            Task {
                for await update in updates {
                    continuation.yield(.update(update))
                }
                continuation.finish()
            },
            Task {
                for await line in lines {
                    continuation.yield(.line(line))
                }
                continuation.yield(.inputEnded)
            },
        ]
        defer {
            forwarders.forEach { $0.cancel() }
            continuation.finish()
        }
        var waiting: [(offer: IncomingOffer, contact: LocalSendContact?)] = []
        var current: IncomingOffer?
        var currentContact: LocalSendContact?
        var shownAt = ContinuousClock.now
        var inputOpen = true
        var timer: Task<Void, Never>?
        func next() {
            timer?.cancel()
            current = nil
            currentContact = nil
            guard !waiting.isEmpty else { return }
            let (offer, contact) = waiting.removeFirst()
            current = offer
            currentContact = contact
            shownAt = .now
            show(Self.text(for: offer, contact: contact))
            timer = Task {
                guard (try? await Task.sleep(until: offer.deadline, clock: .continuous)) != nil else { return }
                continuation.yield(.expired(offer.transferID, offer.peer.peerID))
            }
        }
        for await input in inputs {
            switch input {
            case .update(.gone(let transferID, let peerID, let reason)):
                waiting.removeAll { $0.offer.transferID == transferID && $0.offer.peer.peerID == peerID }
                if let offer = current, offer.transferID == transferID, offer.peer.peerID == peerID {
                    show(["the offer of \(Self.sender(offer)) ended: \(TerminalText.escape(reason))"])
                    next()
                }
            case .update(.offer(let offer, let contact)):
                guard inputOpen else {
                    show(["nobody can answer (end of input): denying the offer of \(Self.sender(offer))"])
                    await respond(offer, .deny)
                    continue
                }
                waiting.append((offer, contact))
                if current == nil {
                    next()
                }
            case .line(let line):
                guard let offer = current else { continue }
                guard ContinuousClock.now - shownAt >= minimumAnswerDelay else {
                    show(["(ignored an answer typed before this offer was shown: answer again)"])
                    continue
                }
                var answer = Self.answer(line)
                switch answer {
                case .deny: show(["denied"])
                case .accept: show(["accepted"])
                case .always where offer.peer.protocolName == Self.localSend && currentContact == nil:
                    // A LocalSend device is pinned only once its fingerprint was shown to compare.
                    answer = .accept
                    show([
                        "accepted, but \(Self.sender(offer)) is not trusted: no fingerprint was shown to compare"
                    ])
                case .always where offer.peer.protocolName == Self.localSend:
                    show([
                        "accepted; LocalSend device \(Self.sender(offer)) is trusted from now on, by its fingerprint"
                            + " (ferry trust list)"
                    ])
                case .always where offer.peer.pairingCode == nil:
                    // Trusting from now on means a code was compared: a link without one is accepted this once.
                    answer = .accept
                    show([
                        "accepted, but \(Self.sender(offer)) is not trusted: its link has no pairing code to compare"
                            + " (pin it by its device ID: ferry trust add ID --name NAME)"
                    ])
                case .always: show(["accepted; \(Self.sender(offer)) is trusted from now on (ferry trust list)"])
                }
                await respond(offer, answer)
                next()
            case .expired(let transferID, let peerID):
                guard let offer = current, offer.transferID == transferID, offer.peer.peerID == peerID else { continue }
                show(["no answer in time: the offer of \(Self.sender(offer)) was denied"])
                next()
            case .inputEnded:
                inputOpen = false
                for offer in [current].compactMap({ $0 }) + waiting.map(\.offer) {
                    await respond(offer, .deny)
                }
                waiting.removeAll()
                timer?.cancel()
                current = nil
            }
        }
        timer?.cancel()
    }

    /// "y"/"yes" accepts, "a"/"always" accepts and trusts, anything else denies; any case, spaces around.
    static func answer(_ line: String) -> Answer {
        switch line.trimmingSpaces.lowercased() {
        case "y", "yes": return .accept
        case "a", "always": return .always
        default: return .deny
        }
    }

    /// "y" or "yes", in any case, with spaces around.
    static func isYes(_ line: String) -> Bool {
        answer(line) == .accept
    }

    static func sender(_ offer: IncomingOffer) -> String {
        TerminalText.escape(offer.peer.displayName)
    }

    /// `PeerInfo.protocolName` of a LocalSend device.
    static let localSend = "localsend"

    /// The whole prompt for `offer`: the files, then who sends them (a LocalSend device's `contact`: its
    /// fingerprint and the Verify page's text instead of a pairing code), then the question.
    static func text(for offer: IncomingOffer, contact: LocalSendContact? = nil) -> [String] {
        var lines = text(sender: offer.peer.displayName, files: offer.files, totalBytes: offer.totalBytes)
        lines.removeLast()
        if let contact, !offer.peer.isTrusted {
            let name = TerminalText.escape(offer.peer.displayName)
            lines += contact.lines()
            lines.append("Accept? [y]es, [n]o, [a]lways (trust \(name) from now on, by this fingerprint)")
        } else {
            lines += pairingLines(offer.peer)
        }
        return lines
    }

    /// Who the sender is and how sure we are of it, then the question:
    ///
    /// ```
    /// From device ABCD-EFGH; pairing code 123 456: the sender shows the same code unless someone is in between.
    /// Accept? [y]es, [n]o, [a]lways (trust alice from now on)
    /// ```
    static func pairingLines(_ peer: PeerInfo) -> [String] {
        let name = TerminalText.escape(peer.displayName)
        if peer.isTrusted {
            return [
                "From \(name), trusted (device \(peer.deviceID.shortDescription), key verified)"
                    + TransferReporter.codeAside(peer) + ".", "Accept? [y/N]",
            ]
        }
        if peer.protocolName == localSend {
            // Without a `LocalSendContact` (no LocalSend identity of ours to make the Verify page's text from):
            // the fingerprint alone, and no `always`.
            return [
                "From LocalSend device \(name), fingerprint \(LocalSendVerification.fingerprint(peer.deviceID));"
                    + " LocalSend has no pairing code.",
                "Accept? [y/N]",
            ]
        }
        let code = peer.pairingCode.map { "; pairing code \(PairingCode.readable($0))" } ?? ""
        return [
            "From device \(peer.deviceID.shortDescription)\(code): the sender shows the same code unless someone is in"
                + " between.",
            "Accept? [y]es, [n]o, [a]lways (trust \(name) from now on)",
        ]
    }

    /// The prompt's lines:
    ///
    /// ```
    /// alice offers 2 files (2.1 MiB):
    ///   photo.jpg  2.0 MiB  4032x3024
    ///   notes.txt  120 KiB
    /// Accept? [y/N]
    /// ```
    ///
    /// A text sent with `--text` is counted and listed as a message (`alice offers 1 file and a message (2.0 MiB):`,
    /// `  a message  21 B`): its entry's name is ferry's, not the sender's.
    /// The names `ferry send --text` gives a message: `message.txt`, or `message (N).txt` beside a file of that name.
    static func isMessageName(_ path: String) -> Bool {
        if path == "message.txt" { return true }
        guard path.hasPrefix("message ("), path.hasSuffix(").txt") else { return false }
        let number = path.dropFirst("message (".count).dropLast(").txt".count)
        return !number.isEmpty && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber)
    }

    static func text(sender: String, files: [OfferedFile], totalBytes: UInt64) -> [String] {
        let messages = files.filter { Payload.isMessage($0.mediaType, size: $0.size) }.count
        let count = TransferSummary.entries(files: files.count - messages, messages: messages)
        var lines = ["\(TerminalText.escape(sender)) offers \(count) (\(TransferFormat.bytes(totalBytes))):"]
        for file in files.prefix(listedFiles) {
            let isMessage = Payload.isMessage(file.mediaType, size: file.size)
            // The sender picks an entry's media type: a "message" under a name ferry does not give one (it may be
            // kept under that name) shows the name.
            let shown =
                !isMessage
                ? TerminalText.escape(file.path)
                : Self.isMessageName(file.path) ? "a message" : "a message, kept as \(TerminalText.escape(file.path))"
            var line = "  \(shown)  \(TransferFormat.bytes(file.size))"
            if file.pixelWidth > 0, file.pixelHeight > 0 {
                line += "  \(file.pixelWidth)x\(file.pixelHeight)"
            }
            lines.append(line)
        }
        if files.count > listedFiles {
            lines.append("  ... and \(files.count - listedFiles) more")
        }
        lines.append("Accept? [y/N]")
        return lines
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
