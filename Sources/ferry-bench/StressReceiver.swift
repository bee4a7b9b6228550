import FerryTestSupport
import Foundation
import Synchronization

/// One long-running `ferry receive` of the stress run, in the receivers' namespace.
///
/// `.trusted` runs with a pipe for stdin (`--accept trusted`, the sender pinned: accepted by the session, the engine
/// never asks). The two `.ask` kinds run in a tmux pane, so that stdin is a terminal and offers are asked about:
/// with the sender pinned the receive loop answers "accept" the moment the offer arrives (the path of the hang in
/// issue 9); unpinned, a prompt appears and `StressAnswerer` types "y".
final class StressReceiver: Sendable {
    enum Kind: String, Sendable, CaseIterable {
        case trusted = "accept-trusted"
        case askPinned = "ask-pinned"
        case askTyped = "ask-typed"
    }

    let kind: Kind
    let directory: URL
    let port: Int
    /// The `ferry` process (`.trusted`), or nil for a tmux pane.
    let process: FerryProcess?
    /// The pane's shell PID (`.ask*`), killed by PID at the end.
    let panePID: Int32?
    /// Where a pane's stderr goes (prompts, `-v` lines).
    let errorLog: URL?
    let tmux: StressTmux?

    private init(
        kind: Kind, directory: URL, port: Int, process: FerryProcess?, panePID: Int32?, errorLog: URL?,
        tmux: StressTmux?
    ) {
        self.kind = kind
        self.directory = directory
        self.port = port
        self.process = process
        self.panePID = panePID
        self.errorLog = errorLog
        self.tmux = tmux
    }

    /// Starts a receiver of `kind` with its own home under `home` and waits for its port.
    static func start(
        _ kind: Kind, binary: String, session: String, host: TestHost, home: URL, senderID: String,
        scope: BenchScope, tmux: StressTmux
    ) throws -> StressReceiver {
        let name = kind.rawValue
        let environment = try StressHome.environment(home.appendingPathComponent(name))
        let directory = home.appendingPathComponent("inbox-\(name)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if kind != .askTyped {
            let pinned = try FerryProcess.run(
                "/usr/bin/env",
                environment.map { "\($0.key)=\($0.value)" }.sorted()
                    + [binary, "trust", "add", senderID, "--name", StressHome.senderName])
            guard pinned.status == 0 else { throw BenchFailure("ferry trust add failed: \(pinned.stderr)") }
        }
        let arguments = [
            "--session", session, "--name", name, "--port", "0", "--interface", host.interface, "-v", "-v",
            "receive", "--into", directory.path, "--accept", kind == .trusted ? "trusted" : "ask", "--json",
        ]
        if kind == .trusted {
            let process = try scope.start(binary, arguments, environment: environment, namespace: host.namespace)
            let listening: [String: Any]
            do {
                listening = try process.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "listening" }
            } catch {
                throw BenchFailure("ferry receive (\(name)) did not start: \(process.capturedOutput())")
            }
            guard let port = (listening["port"] as? NSNumber)?.intValue else { throw BenchFailure("no port") }
            return StressReceiver(
                kind: kind, directory: directory, port: port, process: process, panePID: nil, errorLog: nil,
                tmux: nil)
        }
        let output = home.appendingPathComponent("\(name).out")
        let errors = home.appendingPathComponent("\(name).err")
        let command =
            ["ip", "netns", "exec", host.namespace, "env"] + environment.map { "\($0.key)=\($0.value)" }.sorted()
            + [binary] + arguments
        // `exec`: the pane's process is ferry itself, so its PID is the one stopped at the end.
        let shell =
            "exec " + command.map(StressTmux.quote).joined(separator: " ") + " >" + StressTmux.quote(output.path)
            + " 2>"
            + StressTmux.quote(errors.path)
        let pid = try tmux.newWindow(name: name, shell: shell)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("\"listening\"") }),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let port = (object["port"] as? NSNumber)?.intValue
            {
                return StressReceiver(
                    kind: kind, directory: directory, port: port, process: nil, panePID: pid, errorLog: errors,
                    tmux: tmux)
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        throw BenchFailure("ferry receive (\(name)) in tmux did not start: \(stderr.suffix(600))")
    }

    /// Stops the receiver: SIGTERM to the ferry process, or SIGKILL to its pane's process by PID.
    func stop() {
        process?.signal(SIGTERM)
        _ = try? process?.waitForExit(timeout: .seconds(5))
        if let panePID { _ = Glibc.kill(panePID, SIGTERM) }
    }

    /// A line of the receiver's own output that says why it is unwell, for the report.
    var lastErrorLines: [String] {
        if let process { return Array(process.allStderrLines.suffix(3)) }
        let text = errorLog.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
        return Array(text.split(separator: "\n").suffix(3).map(String.init))
    }
}

/// The homes of the stress run's processes: identity, trust store and state of their own each.
enum StressHome {
    static let senderName = "stress-sender"

    static func environment(_ root: URL) throws -> [String: String] {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let path = root.path
        return [
            "HOME": path, "XDG_CONFIG_HOME": path + "/config", "XDG_DATA_HOME": path + "/data",
            "XDG_STATE_HOME": path + "/state", "XDG_CACHE_HOME": path + "/cache",
        ]
    }
}

/// A tmux server of the stress run's own (its own socket), so that receivers get a terminal for stdin.
final class StressTmux: Sendable {
    let socket: String
    let tmux: String

    init() throws {
        guard let tmux = ExecutableSearch.path(of: "tmux") else {
            throw TestSupportError.binaryNotFound(name: "tmux", searched: ["PATH"])
        }
        self.tmux = tmux
        socket = "ferry-stress-\(getpid())"
    }

    /// Opens a window (a new session the first time) running `shell`; returns the pane's PID.
    func newWindow(name: String, shell: String) throws -> Int32 {
        let result = try FerryProcess.run(
            tmux,
            ["-L", socket, "new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-P", "-F", "#{pane_pid}", shell])
        guard result.status == 0, let pid = Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw BenchFailure("tmux new-session failed: \(result.stderr)") }
        return pid
    }

    /// Types `text` and Enter into the window `name`.
    func type(_ text: String, into name: String) {
        _ = try? FerryProcess.run(tmux, ["-L", socket, "send-keys", "-t", name, text, "Enter"])
    }

    /// Ends this run's tmux server (only ours: it has its own socket).
    func stop() {
        _ = try? FerryProcess.run(tmux, ["-L", socket, "kill-server"])
    }

    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Types "y" into the `.askTyped` receiver's pane for every prompt it shows, once the prompt has been on screen
/// longer than the prompt's guard against answers typed for an earlier one (0.7 s).
final class StressAnswerer: Sendable {
    private let receiver: StressReceiver
    private let stopped = Mutex(false)
    let answered = Mutex(0)

    init(receiver: StressReceiver) {
        self.receiver = receiver
    }

    func start() {
        let thread = Thread { [self] in loop() }
        thread.name = "ferry-stress-answerer"
        thread.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
    }

    private func loop() {
        guard let log = receiver.errorLog, let tmux = receiver.tmux else { return }
        var seen = 0
        while !stopped.withLock({ $0 }) {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let prompts = text.components(separatedBy: "Accept? [y]es").count - 1
            if prompts > seen {
                seen = prompts
                Thread.sleep(forTimeInterval: 0.8)
                tmux.type("y", into: receiver.kind.rawValue)
                answered.withLock { $0 += 1 }
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }
}
