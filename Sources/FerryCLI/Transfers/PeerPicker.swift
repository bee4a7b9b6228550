import FerrySession
import FerryWire

/// GameKit's peer picker in a terminal: lists receiving peers as they are discovered, numbered, and lets the user
/// choose some by typing their numbers.
///
/// Used by `ferry send` when no target is named and both stdin and stderr are terminals. Numbers never change
/// once shown (a new peer gets the next one), so what the user types always means what they saw. The list and
/// the prompt go to stderr; stdout stays clean for `--json`.
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
            "Looking for peers in session '\(TerminalText.escape(sessionID))'. Type the numbers of the peers to "
                + "send to (e.g. 1 3), then Enter; Ctrl-C cancels.")
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
                    shown.append(peer)
                    sink.writeLine(Self.row(number: shown.count, peer))
                }
            case .line(let line):
                switch Self.choice(line, count: shown.count) {
                case .success(let numbers) where !numbers.isEmpty:
                    return numbers.map { shown[$0 - 1] }
                case .success:
                    continue
                case .failure(let error):
                    sink.writeLine(error.message)
                }
            case .inputEnded:
                throw CLIError.failure("no peer was chosen (end of input)")
            }
        }
        throw CancellationError()
    }

    /// `  2) alice-laptop  ABCD-EFGH  192.168.1.20:41971`
    static func row(number: Int, _ peer: PeerInfo) -> String {
        let address = peer.address?.description ?? "-"
        return "  \(number)) \(TerminalText.escape(peer.displayName))  \(peer.deviceID.shortDescription)  \(address)"
    }

    /// The numbers in a typed line (separated by spaces or commas), each 1...count, without duplicates, in
    /// order; an empty line is an empty choice. A failure carries the message to show.
    static func choice(_ line: String, count: Int) -> Result<[Int], PickerInputError> {
        var numbers: [Int] = []
        for word in line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }) {
            guard let number = Int(word), (1...max(count, 1)).contains(number), count > 0 else {
                let range = count == 0 ? "no peer is listed yet" : "type numbers from 1 to \(count)"
                return .failure(PickerInputError(message: "'\(TerminalText.excerpt(String(word)))': \(range)"))
            }
            if !numbers.contains(number) {
                numbers.append(number)
            }
        }
        return .success(numbers)
    }
}

/// A line the picker could not use, with what to type instead.
struct PickerInputError: Error, Equatable {
    var message: String
}
