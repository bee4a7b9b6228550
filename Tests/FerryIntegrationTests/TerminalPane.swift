import Foundation
import FerryTestSupport

/// One `ferry` command on a real terminal: a detached tmux session on a tmux server of its own, read with
/// `capture-pane` and typed into with `send-keys`.
///
/// Why tmux: what ferry asks on a terminal (and only there) needs stdin and stderr to be ttys, and a person's
/// answer to arrive as typed keys. Each pane has its own tmux server socket, so `close()` (`kill-server`) ends
/// this test's server and the processes in its pane (SIGHUP), nothing else. The command runs under `sh`, which
/// prints `[exit N]` when it ends and then waits on the terminal (`cat`), so the status stays readable.
final class TerminalPane: Sendable {
    let socket: String

    /// Starts `ferry ARGUMENTS` with `environment` in a new pane, `columns` wide (200 by default) and 50 lines
    /// high; with `stdinFile`, standard input is that file instead of the terminal (which stays the controlling
    /// terminal, `/dev/tty`); with `namespace`, inside that network namespace (`ip netns exec`, a test bed's host).
    init(
        _ arguments: [String], environment: [String: String], name: String = "pane", stdinFile: String? = nil,
        columns: Int = 200, namespace: String? = nil
    ) throws {
        socket = "ferry-test-\(name.filter { $0.isLetter || $0.isNumber })-\(UInt32.random(in: 0...UInt32.max))"
        let binary = try FerryBinary.url.path
        let assignments = environment.map { "\($0.key)=\(Self.quote($0.value))" }.sorted().joined(separator: " ")
        let command =
            ([binary] + arguments).map(Self.quote).joined(separator: " ")
            + (stdinFile.map { " < " + Self.quote($0) } ?? "")
        let netns = namespace.map { "ip netns exec \(Self.quote($0)) " } ?? ""
        let script = "\(netns)env \(assignments) \(command); echo \"[exit $?]\"; exec cat >/dev/null"
        try Self.tmux(["-L", socket, "new-session", "-d", "-x", "\(columns)", "-y", "50", "sh", "-c", script])
    }

    deinit {
        close()
    }

    /// Ends the tmux server of this pane and what runs in it.
    func close() {
        _ = try? Self.tmux(["-L", socket, "kill-server"])
        try? FileManager.default.removeItem(atPath: "/tmp/tmux-\(getuid())/\(socket)")
    }

    /// The pane's text now, its lines joined (wrapped lines rejoined).
    func text() throws -> String {
        try Self.tmux(["-L", socket, "capture-pane", "-p", "-J", "-S", "-200"])
    }

    /// Types `line` and Enter.
    func type(_ line: String) throws {
        try Self.tmux(["-L", socket, "send-keys", "-l", line])
        try Self.tmux(["-L", socket, "send-keys", "Enter"])
    }

    /// Types `text` without Enter (a line left half typed).
    func typeKeys(_ text: String) throws {
        try Self.tmux(["-L", socket, "send-keys", "-l", text])
    }

    /// Presses one key by its tmux name (`C-c`, `C-d`).
    func press(_ key: String) throws {
        try Self.tmux(["-L", socket, "send-keys", key])
    }

    /// Waits until the pane shows `text`; returns the pane's text then.
    @discardableResult
    func waitFor(_ text: String, timeout: Duration = .seconds(60)) throws -> String {
        try waitUntil(timeout: timeout, "'\(text)'") { $0.contains(text) }
    }

    /// Waits until the pane shows `text` at least `count` times; returns the pane's text then.
    @discardableResult
    func waitUntilCount(_ text: String, _ count: Int, timeout: Duration = .seconds(60)) throws -> String {
        try waitUntil(timeout: timeout, "'\(text)' \(count) times") {
            $0.components(separatedBy: text).count - 1 >= count
        }
    }

    /// Waits until the command ended; returns its exit status and the pane's text.
    func waitForExit(timeout: Duration = .seconds(90)) throws -> (status: Int, text: String) {
        let screen = try waitUntil(timeout: timeout, "the command's end") { $0.contains("[exit ") }
        let tail = screen.components(separatedBy: "[exit ").last ?? ""
        return (Int(tail.prefix { $0.isNumber }) ?? -1, screen)
    }

    /// Polls the pane (every 50 ms) until `done` holds for its text, or throws with what it showed.
    private func waitUntil(timeout: Duration, _ what: String, _ done: (String) -> Bool) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let screen = try text()
            if done(screen) { return screen }
            guard ContinuousClock.now < deadline else {
                throw TerminalPaneError.timedOut(waitingFor: what, screen: screen)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Runs one tmux client command to its end (with the test support's spawner, which reaps its children).
    @discardableResult
    static func tmux(_ arguments: [String]) throws -> String {
        let result = try FerryProcess.run("tmux", arguments, timeout: .seconds(30))
        guard result.status == 0 else {
            throw TerminalPaneError.tmuxFailed(arguments: arguments, output: result.stdout + result.stderr)
        }
        return result.stdout
    }
}

enum TerminalPaneError: Error, CustomStringConvertible {
    case timedOut(waitingFor: String, screen: String)
    case tmuxFailed(arguments: [String], output: String)

    var description: String {
        switch self {
        case .timedOut(let what, let screen): "timed out waiting for \(what); the pane shows:\n\(screen)"
        case .tmuxFailed(let arguments, let output): "tmux \(arguments.joined(separator: " ")) failed: \(output)"
        }
    }
}
