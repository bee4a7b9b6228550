import FerryTestSupport
import Foundation
import Testing

/// Broadcasts with relaying receivers (issue 12, PROTOCOL.md 11.11): real `ferry receive` processes each with its own
/// inbox, a real `ferry send` to all of them, and what the JSON lines say.
final class SwarmHarness: Sendable {
    let transfer: TransferHarness
    let inboxes: [TemporaryDirectory]
    let receivers: [(process: FerryProcess, port: Int)]

    /// Receivers named `names` on loopback (`--once`, `--accept all`), `extra[name]` added to their arguments.
    init(_ names: [String], extra: [String: [String]] = [:], test: String = #function) throws {
        transfer = try TransferHarness(test)
        var inboxes: [TemporaryDirectory] = []
        var receivers: [(FerryProcess, Int)] = []
        do {
            for name in names {
                let inbox = try TemporaryDirectory(prefix: "ferry-swarm-\(name)")
                inboxes.append(inbox)
                receivers.append(try transfer.receiver(name, into: inbox.path, extra[name] ?? []))
            }
        } catch {
            inboxes.forEach { $0.remove() }
            throw error
        }
        self.inboxes = inboxes
        self.receivers = receivers
    }

    deinit {
        transfer.chat.registry.stopAll()
        inboxes.forEach { $0.remove() }
    }

    var ports: [Int] { receivers.map(\.port) }

    /// Waits (on a thread of its own) for every receiver to end: each one's status and JSON lines, in order.
    func finishReceivers(timeout: Duration = .seconds(240)) async throws -> [(status: Int32, lines: [[String: Any]])] {
        var results: [(Int32, [[String: Any]])] = []
        for receiver in receivers {
            let (status, stdout, _) = try await receiver.process.finish(timeout: timeout)
            results.append((status, stdout.compactMap(TransferHarness.json)))
        }
        return results
    }

    /// The file at `name` in receiver `index`'s inbox matches `source` (SHA-256), with a message naming it.
    func expectIdentical(
        _ index: Int, _ name: String, to source: String, sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        #expect(
            Self.identical(inboxes[index].path + "/" + name, source),
            "receiver \(index)'s \(name) differs from the source (or is missing): \(receivers[index].process.capturedOutput())",
            sourceLocation: sourceLocation)
    }

    /// Whether the file at `path` exists and has the bytes of `source` (SHA-256).
    static func identical(_ path: String, _ source: String) -> Bool {
        guard let received = try? TransferHarness.sha256(path), let original = try? TransferHarness.sha256(source)
        else { return false }
        return received == original
    }

    /// The JSON objects of `lines` whose `event` is `event`.
    static func events(_ event: String, in lines: [[String: Any]]) -> [[String: Any]] {
        lines.filter { $0["event"] as? String == event }
    }

    /// The integer field `key` of the last `finished` event of `lines` (nil when there is none, or no such field).
    static func finishedField(_ key: String, in lines: [[String: Any]]) -> Int? {
        events("finished", in: lines).last?[key] as? Int
    }
}
