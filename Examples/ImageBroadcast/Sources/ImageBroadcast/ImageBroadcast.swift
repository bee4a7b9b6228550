import FerrySecurity
import FerrySession
import FerryStateMachines
import FerryTransfer
import FerryWire
import Foundation
import Synchronization

/// `ImageBroadcast --session S --interface lo --image FILE [--name NAME] [--count N]`
///
/// Joins session S (discovery on the interface), reads FILE into `Data`, sends it to every peer of the session as it
/// connects, and prints `received NAME SHA256 from PEER` for each payload it receives in memory (SHA256: the hex
/// SHA-256 of the bytes). Runs until interrupted or, with `--count N`, until it has received N images and sent its
/// own to N peers (exit status 0). Ctrl-C (SIGINT) ends it with 130 and SIGTERM with 143 (128 + the signal's
/// number, as a shell reports a process the signal killed), once the session said goodbye and the staging directory
/// is removed. Errors go to stderr with exit status 1 (64 for a usage error).
@main
struct ImageBroadcast {
    struct Options {
        var session = ""
        var interface = ""
        var image = ""
        var name = ProcessInfo.processInfo.hostName
        var count: Int?
    }

    static func main() async {
        let options: Options
        do {
            options = try parse(Array(CommandLine.arguments.dropFirst()))
        } catch {
            fail(
                "\(error)\nusage: ImageBroadcast --session S --interface IF --image FILE [--name NAME] [--count N]",
                status: 64)
        }
        // Ctrl-C or SIGTERM cancels the run: the session says goodbye and the staging directory is removed. Every
        // wait of the run ends on cancellation (`Progress.waitUntilDone` included), so the process then exits.
        let work = Task { try await run(options) }
        let stoppedBy = FirstSignal()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            // @Sendable: not main-actor isolated like `main`, since dispatch runs it on a queue of its own.
            source.setEventHandler { @Sendable in
                stoppedBy.note(number)
                work.cancel()
            }
            source.resume()
            sources.append(source)
        }
        let outcome = await work.result
        sources.forEach { $0.cancel() }
        if let number = stoppedBy.number { exit(128 + number) }
        if case .failure(let error) = outcome { fail("\(error)", status: 1) }
    }

    static func run(_ options: Options) async throws {
        let image = try Data(contentsOf: URL(fileURLWithPath: options.image))
        let imageName = URL(fileURLWithPath: options.image).lastPathComponent
        // Received entries are staged (and verified) in a directory before they are handed over in memory.
        let staging = FileManager.default.temporaryDirectory.appendingPathComponent("imagebroadcast-\(UUID())").path
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: staging) }

        let session = SessionConfiguration(
            sessionID: options.session, displayName: options.name, mode: .peer, identity: try DeviceIdentity.generate(),
            listenPort: 0, interfaces: [options.interface], acceptPolicy: .all, transfersEnabled: true)
        var transfers = TransferConfiguration(receiveDirectory: staging, offerPolicy: .all)
        transfers.memoryDelivery = MemoryDelivery(maxSize: 64 << 20)

        try await Session.run(configuration: session) { session in
            try await TransferEngine.run(session: session, configuration: transfers) { engine in
                let progress = Progress(count: options.count)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // Peers: connect to those found (of two peers, the lower ID asks), send the image to each as it
                    // joins.
                    group.addTask {
                        for await event in session.events {
                            switch event {
                            case .peerStateChanged(let peer, .available, _) where session.localPeerID < peer.peerID:
                                Task { _ = try? await session.connect(to: peer.peerID) }
                            case .peerStateChanged(let peer, .connected, _):
                                Task {
                                    let payload = Payload(name: imageName, data: image)
                                    let outcomes = try await engine.send(payload, to: [peer.peerID])
                                    if outcomes.allSatisfy(\.isSuccess) { await progress.sent() }
                                }
                            case .connectionRequested(let peer):
                                try? await session.accept(peer.peerID)
                            default:
                                continue
                            }
                        }
                    }
                    // Payloads: print each one received in memory.
                    group.addTask {
                        for await event in engine.events {
                            guard case .fileFinished(let outcome) = event, outcome.direction == .receiving,
                                let data = outcome.payload
                            else { continue }
                            let digest = hex(SHA256Hasher().finalizing(data))
                            let line =
                                "received \(visible(outcome.fileName)) \(digest) from \(visible(outcome.peer.displayName))"
                            // Unbuffered, so that a reader sees each line at once (C's stdout is not for Swift 6).
                            FileHandle.standardOutput.write(Data((line + "\n").utf8))
                            await progress.received()
                        }
                    }
                    group.addTask { await progress.waitUntilDone() }
                    // The first task to end (`--count` reached, or the session closed) ends the run.
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw UsageError(text: "\(flag) needs a value") }
            switch flag {
            case "--session": options.session = value
            case "--interface": options.interface = value
            case "--image": options.image = value
            case "--name": options.name = value
            case "--count":
                guard let count = Int(value), count > 0 else { throw UsageError(text: "--count: a positive number") }
                options.count = count
            default: throw UsageError(text: "unknown option \(flag)")
            }
        }
        guard !options.session.isEmpty, !options.interface.isEmpty, !options.image.isEmpty else {
            throw UsageError(text: "--session, --interface and --image are needed")
        }
        return options
    }

    static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data(("ImageBroadcast: " + message + "\n").utf8))
        exit(status)
    }
}

struct UsageError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

/// The first of SIGINT and SIGTERM that arrived, for the exit status (128 + its number).
final class FirstSignal: Sendable {
    private let first = Mutex<Int32?>(nil)

    func note(_ number: Int32) { first.withLock { $0 = $0 ?? number } }

    var number: Int32? { first.withLock { $0 } }
}

/// Counts images sent and received, for `--count`.
actor Progress {
    let count: Int?
    private var sentCount = 0
    private var receivedCount = 0
    private var waiter: CheckedContinuation<Void, Never>?
    private var cancelled = false

    init(count: Int?) { self.count = count }

    func sent() { sentCount += 1; check() }
    func received() { receivedCount += 1; check() }

    /// Returns once `count` images were sent and received, or when the task is cancelled (Ctrl-C, SIGTERM): a
    /// continuation does not end by itself on cancellation, and the run waits for this task before it exits.
    func waitUntilDone() async {
        guard count != nil else {
            // No --count: never done; the session's end (Ctrl-C) ends the run.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation {
                waiter = $0
                // Cancelled before the waiter was stored: the handler below found none to resume.
                if Task.isCancelled { cancelled = true }
                check()
            }
        } onCancel: {
            Task { await self.cancel() }
        }
    }

    private func cancel() {
        cancelled = true
        check()
    }

    private func check() {
        guard let waiter else { return }
        if !cancelled {
            guard let count, sentCount >= count, receivedCount >= count else { return }
        }
        self.waiter = nil
        waiter.resume()
    }
}

extension SHA256Hasher {
    func finalizing(_ data: Data) -> [UInt8] {
        data.withUnsafeBytes { update($0) }
        return finalize()
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// A peer's text with control characters made visible, so that a name cannot move the cursor or forge a line.
func visible(_ text: String) -> String {
    String(
        text.unicodeScalars.flatMap { scalar -> String.UnicodeScalarView in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars
                : String(scalar).unicodeScalars
        }.map(Character.init))
}
