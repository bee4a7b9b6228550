import Foundation
import FerryTestSupport
import Testing

/// Starts real `ferry` processes for a test: each test has its own session ID (so tests running at the same
/// time never see each other), its own config directory, and a registry that stops every process it started.
final class ChatHarness: Sendable {
    let session: String
    let registry = ProcessRegistry()
    let config: TemporaryDirectory

    init(_ name: String = #function) throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        session = "t-\(name.prefix(24).filter { $0.isLetter || $0.isNumber })-\(tag)"
        config = try TemporaryDirectory(prefix: "ferry-config")
    }

    deinit {
        registry.stopAll()
        config.remove()
    }

    /// Each named process is its own install: its own config directory, so its own key and device ID (two
    /// processes of one name share it, as a restarted ferry does).
    func environment(_ name: String) -> [String: String] {
        ["XDG_CONFIG_HOME": config.path + "/" + name.filter { $0.isLetter || $0.isNumber || $0 == "-" }]
    }

    /// Runs `body` on a fresh test bed of `hosts` network namespaces with a harness whose processes are stopped
    /// before the bed is torn down. Where namespaces cannot be made (not root), the test is skipped, visibly.
    static func onTestBed(
        hosts: Int, name: String = #function, _ body: (TestBed, ChatHarness) async throws -> Void
    ) async throws {
        guard try TestBed.requireAvailability() else {
            try Test.cancel("network namespaces unavailable: \(TestBed.isAvailable.reason)")
        }
        TestBed.removeStale()
        try await TestBed.with(hosts: hosts) { bed in
            let harness = try ChatHarness(name)
            defer { harness.registry.stopAll() }
            try await body(bed, harness)
        }
    }

    /// `ferry chat --json` on loopback (`--accept all` unless `extra` names a policy); returns once it printed its `ready` line (with its port).
    func chat(
        _ name: String, _ extra: [String] = [], interface: String? = "lo", session: String? = nil,
        bed: TestBed? = nil, host: TestHost? = nil
    ) throws -> (process: FerryProcess, port: Int) {
        var arguments = ["chat", "--json", "--session", session ?? self.session, "--name", name, "--port", "0"]
        if let interface { arguments += ["--interface", interface] }
        // Scripts (stdin not a terminal) let only trusted peers in by default (issue 28, 10); these chats meet
        // strangers on purpose unless the test says otherwise.
        if !extra.contains("--accept") { arguments += ["--accept", "all"] }
        arguments += extra
        let process: FerryProcess
        if let bed, let host {
            process = registry.register(try bed.startFerry(on: host, arguments, environment: environment(name)))
        } else {
            process = try registry.startFerry(arguments, environment: environment(name))
        }
        let ready = try process.nextJSON { $0["event"] as? String == "ready" }
        return (process, ready["port"] as? Int ?? 0)
    }

    /// `ferry peers --json --timeout 0` (runs until stopped).
    func peers(_ extra: [String] = [], session: String? = nil) throws -> FerryProcess {
        try registry.startFerry(
            ["peers", "--json", "--timeout", "0", "--session", session ?? self.session, "--interface", "lo"] + extra,
            environment: environment("peers"))
    }
}

extension FerryProcess {
    /// Waits for a chat event about `peer` (by display name).
    @discardableResult
    func waitForEvent(_ event: String, peer name: String, timeout: Duration = .seconds(60)) throws -> [String: Any] {
        try nextJSON(timeout: timeout) { object in
            guard object["event"] as? String == event, let peer = object["peer"] as? [String: Any] else { return false }
            return peer["name"] as? String == name
        }
    }

    /// Waits until `event` was reported for every peer in `names`, in any order; returns each one's event.
    func waitForEvent(_ event: String, peers names: Set<String>, timeout: Duration = .seconds(60)) throws
        -> [String: [String: Any]]
    {
        var found: [String: [String: Any]] = [:]
        while Set(found.keys) != names {
            let object = try nextJSON(timeout: timeout) { object in
                guard object["event"] as? String == event, let peer = object["peer"] as? [String: Any],
                    let name = peer["name"] as? String
                else { return false }
                return names.contains(name)
            }
            if let name = (object["peer"] as? [String: Any])?["name"] as? String { found[name] = object }
        }
        return found
    }

    /// Waits for a received message and returns its text.
    func nextMessage(timeout: Duration = .seconds(60)) throws -> (text: String, from: String, mode: String) {
        let object = try nextJSON(timeout: timeout) { $0["event"] as? String == "message" }
        return (object["text"] as? String ?? "", object["from"] as? String ?? "", object["mode"] as? String ?? "")
    }

    func waitForError(containing text: String, timeout: Duration = .seconds(60)) throws -> String {
        let object = try nextJSON(timeout: timeout) { object in
            object["event"] as? String == "error" && (object["message"] as? String ?? "").contains(text)
        }
        return object["message"] as? String ?? ""
    }
}
