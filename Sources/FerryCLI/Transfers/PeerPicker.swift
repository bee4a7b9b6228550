import FerrySession
import FerryWire

/// GameKit's peer picker in a terminal: lists receiving peers as they are discovered, numbered, and lets the user
/// choose some by typing their numbers, their names, or `all`.
///
/// Used by `ferry send` when no target is named and both stdin and stderr are terminals. Numbers never change
/// once shown (a new peer gets the next one), so what the user types always means what they saw. The list and
/// the prompt go to stderr; stdout stays clean for `--json`. What a typed line means is decided by
/// `choice(_:among:)` (in `PeerPicker+Choice.swift`), how a row looks by `row(number:_:)`.
struct PeerPicker: Sendable {
    let tracker: PeerTracker
    let sink: any TextSink
    let sessionID: String

    private enum Input: Sendable {
        case peersChanged
        case line(String)
        case inputEnded
    }

    /// Shows peers until the user picks some; returns them in the order typed, without duplicates.
    /// - Throws: `CLIError.failure` at end of input without a choice; `CancellationError`.
    func pick(lines: AsyncStream<String>) async throws -> [PeerInfo] {
        sink.writeLine(
            "Looking for peers in session '\(TerminalText.escape(sessionID))'. Type the numbers or names of the "
                + "peers to send to (e.g. 1 3, or alice), or all, then Enter; Ctrl-C cancels.")
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        let tracker = self.tracker
        let watcher = Task {
            var generation = -1
            while !Task.isCancelled {
                let current = await tracker.generation
                if current != generation {
                    generation = current
                    continuation.yield(.peersChanged)
                }
                await tracker.waitForChange(after: current, until: nil)
                if await tracker.isFinished {
                    return
                }
            }
        }
        let reader = Task {
            for await line in lines {
                continuation.yield(.line(line))
            }
            continuation.yield(.inputEnded)
        }
        defer {
            watcher.cancel()
            reader.cancel()
            continuation.finish()
        }
        var shown: [PeerInfo] = []
        for await input in inputs {
            try Task.checkCancellation()
            switch input {
            case .peersChanged:
                for peer in await tracker.reachable
                where peer.mode != .client && !shown.contains(where: { $0.peerID == peer.peerID }) {
                    if shown.isEmpty {
                        sink.writeLine(Self.header)
                    }
                    shown.append(peer)
                    sink.writeLine(Self.row(number: shown.count, PeerCandidate(peer)))
                }
            case .line(let line):
                switch Self.choice(line, among: shown.map(PeerCandidate.init)) {
                case .success(let numbers):
                    return numbers.map { shown[$0 - 1] }
                case .failure(let error):
                    sink.writeLine(error.message)
                }
            case .inputEnded:
                throw CLIError.failure("no peer was chosen (end of input)")
            }
        }
        throw CancellationError()
    }
}

/// A line the picker could not use, with what to type instead.
struct PickerInputError: Error, Equatable {
    var message: String
}
