import FerrySecurity
import FerrySession
import FerryTransfer
import FerryWire
import Synchronization

/// Everything `send`, `receive` and `watch` print about transfers: JSON lines, text lines, progress bars.
///
/// The three commands drive the same engine and report the same events, so they print them the same way: with
/// `--json` one object per engine event on stdout (numbers raw: bytes, seconds, bytes per second); otherwise one
/// line per finished file or failure on stderr, above live bars when stderr is a terminal. Every string that
/// came from a peer (names, file names, reasons) is escaped before it reaches a terminal.
final class TransferReporter: Sendable {
    let context: CommandContext
    let json: Bool
    /// Live bars, when stderr is a terminal (and is not where the JSON goes).
    let board: ProgressBoard?
    /// Transfers that were denied, whose "finished" would only repeat the denial in text.
    private let denied = Mutex<Set<ProgressBoard.Key>>([])
    /// Ticks the board once a second, so that a bar with no progress says that it is stalled.
    private let ticker: Task<Void, Never>?

    init(context: CommandContext, json: Bool, bars: Bool? = nil) {
        self.context = context
        self.json = json
        let wantsBars = bars ?? (context.isStderrTerminal && !(json && context.isStdoutTerminal))
        let board = wantsBars ? ProgressBoard(sink: context.stderr) : nil
        self.board = board
        ticker = board.map { board in
            Task { [weak board] in
                while (try? await Task.sleep(for: .seconds(1))) != nil, let board { board.tick() }
            }
        }
    }

    deinit {
        ticker?.cancel()
    }

    /// Prints a JSON line on stdout.
    func emit(_ line: JSONLine) {
        context.stdout.writeLine(line.text)
    }

    /// Prints text lines on stderr, above the bars if any.
    func say(_ lines: String...) {
        say(lines: lines)
    }

    /// Prints text lines on stderr, above the bars if any.
    func say(lines: [String]) {
        if let board {
            board.print(lines)
        } else {
            context.stderr.write(lines.map { $0 + "\n" }.joined())
        }
    }

    /// A failure to report: a JSON `error` event, or an `Error:` line.
    func failure(_ message: String, peer: PeerInfo? = nil) {
        if json {
            var line: JSONLine = ["event": "error"]
            if let peer {
                Self.appendPeer(peer, to: &line)
            }
            line.append("message", .string(message))
            emit(line)
        } else {
            say("Error: " + TerminalText.escape(message))
        }
    }

    /// A connection to a peer is up (sending commands): its pairing code, for the person to compare with the
    /// receiver's screen, unless the peer is trusted (then its key was checked against the pin).
    func connected(_ peer: PeerInfo) {
        if json {
            var line: JSONLine = ["event": "connected"]
            Self.appendPeer(peer, to: &line)
            line.append("address", peer.address.map { .string($0.description) } ?? .null)
            line.append("code", peer.pairingCode.map { .string($0) } ?? .null)
            line.append("trusted", .bool(peer.isTrusted))
            emit(line)
        } else {
            say(Self.pairingLine(peer))
        }
    }

    /// "bob: pairing code 123 456 (bob shows the same code unless someone is in between)", or "bob: trusted".
    static func pairingLine(_ peer: PeerInfo) -> String {
        let name = TerminalText.escape(peer.displayName)
        if peer.isTrusted { return "\(name) (\(peer.deviceID.shortDescription)): trusted, key verified" }
        guard let code = peer.pairingCode else { return "\(name) (\(peer.deviceID.shortDescription)): connected" }
        return "\(name) (\(peer.deviceID.shortDescription)): pairing code \(PairingCode.readable(code))"
            + " - the receiver shows the same code unless someone is in between"
    }

    /// Reports one engine event.
    func report(_ event: TransferEvent) {
        if json {
            emit(Self.jsonLine(for: event))
        }
        switch event {
        case .offerReceived:
            break
        case .started(let transferID, let peer, _, let files, let accepted, let resumeOffsets):
            let total = zip(files, accepted).reduce(UInt64(0)) { $0 + ($1.1 ? $1.0.size : 0) }
            let done = zip(resumeOffsets, accepted).reduce(UInt64(0)) { $0 + ($1.1 ? $1.0 : 0) }
            board?.update(
                ProgressBoard.Key(transferID: transferID, peerID: peer.peerID),
                ProgressLine(name: peer.displayName, bytesDone: done, totalBytes: total, rate: 0, secondsLeft: nil))
        case .denied(let transferID, let peer, let direction, let reason):
            denied.withLock { _ = $0.insert(ProgressBoard.Key(transferID: transferID, peerID: peer.peerID)) }
            guard !json else { return }
            let name = TerminalText.escape(peer.displayName)
            say(
                direction == .sending
                    ? "\(name) denied the transfer: \(TerminalText.escape(reason))"
                    : "denied a transfer from \(name): \(TerminalText.escape(reason))")
        case .progress(let progress):
            board?.update(
                ProgressBoard.Key(transferID: progress.transferID, peerID: progress.peer.peerID),
                ProgressLine(progress))
        case .fileFinished(let outcome):
            guard !json else { return }
            say(Self.text(for: outcome))
        case .finished(let outcome):
            let key = ProgressBoard.Key(transferID: outcome.transferID, peerID: outcome.peer.peerID)
            let wasDenied = denied.withLock { $0.remove(key) != nil }
            var lines: [String] = []
            if !json, let failure = outcome.failure, !wasDenied {
                let name = TerminalText.escape(outcome.peer.displayName)
                let way = outcome.direction == .sending ? "to" : "from"
                lines.append("transfer \(way) \(name) failed: \(TerminalText.escape(failure))")
            }
            if let board {
                board.remove(key, printing: lines)
            } else if !lines.isEmpty {
                context.stderr.write(lines.map { $0 + "\n" }.joined())
            }
        }
    }

    /// `sent photo.jpg to alice (1.2 MiB)`, `received photo (1).jpg from bob (3 B)`, or the failure.
    static func text(for outcome: FileOutcome) -> String {
        let peer = TerminalText.escape(outcome.peer.displayName)
        let name = TerminalText.escape(outcome.fileName)
        let size = TransferFormat.bytes(outcome.size)
        switch (outcome.direction, outcome.failure) {
        case (.sending, nil):
            return "sent \(name) to \(peer) (\(size))"
        case (.receiving, nil):
            let published = TerminalText.escape(outcome.publishedName ?? outcome.fileName)
            return "received \(published) from \(peer) (\(size))"
        case (.sending, let failure?):
            return "failed to send \(name) to \(peer): \(TerminalText.escape(failure))"
        case (.receiving, let failure?):
            return "failed to receive \(name) from \(peer): \(TerminalText.escape(failure))"
        }
    }
}
