import Foundation
import FerryTestSupport
import Testing

/// Real `ferry send` / `ferry receive` processes for a test, on loopback: each test has its own session ID, its
/// own config directory, source and receive directories, and stops every process it started.
final class TransferHarness: Sendable {
    let chat: ChatHarness
    let source: TemporaryDirectory
    let inbox: TemporaryDirectory

    init(_ name: String = #function) throws {
        chat = try ChatHarness(name)
        source = try TemporaryDirectory(prefix: "ferry-source")
        inbox = try TemporaryDirectory(prefix: "ferry-inbox")
    }

    deinit {
        chat.registry.stopAll()
        source.remove()
        inbox.remove()
    }

    var files: TestFiles { TestFiles(in: source) }
    var session: String { chat.session }

    /// `ferry receive --json` into `directory` (the harness's inbox by default); returns once it printed where it
    /// listens.
    func receiver(
        _ name: String = "inbox", into directory: String? = nil, accept: String = "all", once: Bool = true,
        _ extra: [String] = []
    ) throws -> (process: FerryProcess, port: Int) {
        var arguments = [
            "receive", "--json", "--into", directory ?? inbox.path, "--accept", accept, "--session", session,
            "--name", name, "--port", "0", "--interface", "lo",
        ]
        if once { arguments.append("--once") }
        let process = try chat.registry.startFerry(arguments + extra, environment: chat.environment(name))
        let listening = try process.nextJSON { $0["event"] as? String == "listening" }
        return (process, listening["port"] as? Int ?? 0)
    }

    /// `ferry send --json FILE... --to 127.0.0.1:PORT...`, started (wait for it with `finish`).
    func sender(_ paths: [String], to ports: [Int], _ extra: [String] = []) throws -> FerryProcess {
        let targets = ports.flatMap { ["--to", "127.0.0.1:\($0)"] }
        return try chat.registry.startFerry(
            ["send", "--json"] + paths + targets + ["--session", session, "--name", "outbox", "--interface", "lo"]
                + extra,
            environment: chat.environment("outbox"))
    }

    /// Runs a sender to its end; returns its exit status and its summary line (if it printed one).
    func send(_ paths: [String], to ports: [Int], _ extra: [String] = []) throws
        -> (status: Int32, summary: [String: Any]?, finished: [String: Any]?)
    {
        let process = try sender(paths, to: ports, extra)
        let status = try process.waitForExit(timeout: .seconds(240))
        let objects = process.allStdoutLines.compactMap(Self.json)
        return (
            status, objects.last { $0["event"] as? String == "summary" },
            objects.last { $0["event"] as? String == "finished" }
        )
    }

    /// Runs a sender to its end; returns its exit status, its `finished` event and its `file` events, in order.
    func sendReportingFiles(_ paths: [String], to ports: [Int], _ extra: [String] = []) throws
        -> (status: Int32, finished: [String: Any]?, files: [[String: Any]])
    {
        let process = try sender(paths, to: ports, extra)
        let status = try process.waitForExit(timeout: .seconds(240))
        let objects = process.allStdoutLines.compactMap(Self.json)
        return (
            status, objects.last { $0["event"] as? String == "finished" },
            objects.filter { $0["event"] as? String == "file" }
        )
    }

    static func json(_ line: String) -> [String: Any]? {
        guard let data = line.data(using: .utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// Paths under `directory` that a watcher would see: everything but the staging folder.
    static func visibleFiles(in directory: String) throws -> [String: Int] {
        let snapshot = try DirectorySnapshot(of: URL(fileURLWithPath: directory))
        var result: [String: Int] = [:]
        for entry in snapshot.entries where !entry.path.hasPrefix(".ferry-staging") && entry.kind == .file {
            result[entry.path] = entry.size
        }
        return result
    }

    static func sha256(_ path: String) throws -> String {
        try TestFiles.sha256(ofFile: URL(fileURLWithPath: path))
    }
}
