import Foundation

/// A `localsendd` 0.1.1 daemon as a test peer: it receives into a directory of its own and sends through its
/// control client `localsendctl`.
///
/// Why this shape: localsendd is the most complete of the PyPI peers (protocol 2.2 with PIN, 409, 429, sha256, 422 on
/// a wrong hash, a multicast announce burst and register replies), so most of ferry's LocalSend tests use it.
/// Started with `--unattended` it accepts every transfer while no control client is attached; `watchDevices`
/// attaches one, so a daemon that must receive unattended is never watched at the same time.
///
/// Commands (in the host's namespace, HOME and XDG_* in the peer's own directory, see `LocalSendPeers`):
///
///     localsendd --config DIR/localsendd.toml --port 53317 --socket DIR/ctl.sock --alias ALIAS
///                --download-dir DIR/received --unattended --log-level info --no-log-time
///     localsendctl --socket DIR/ctl.sock send FILE... --to ADDRESS [--pin PIN] --wait --quiet
///
/// The PIN goes into the config file (`pin = "..."`), never on the command line.
public final class LocalSendDaemon: Sendable {
    /// The daemon's process.
    public var process: FerryProcess { run.process }
    public let alias: String
    /// The daemon's fingerprint as it logs and announces it: SHA-256 of its certificate's DER, upper-case hex.
    public let fingerprint: String
    /// Where received files land (`--download-dir`).
    public let downloadDirectory: URL
    /// The host the daemon runs on (nil: this host's namespace).
    public let host: TestHost?
    private let run: LocalSendPeerRun
    private var home: TemporaryDirectory { run.home }

    /// The control socket.
    public var socketPath: String { home.url.appendingPathComponent("ctl.sock").path }

    /// Starts `localsendd` and returns once it serves (its start-up line with the fingerprint is printed after the
    /// HTTPS port is bound and the control socket listens).
    public init(
        alias: String, on host: TestHost?, pin: String? = nil, unattended: Bool = true,
        port: Int = LocalSendPeers.port, timeout: Duration = .seconds(60)
    ) throws {
        run = try LocalSendPeerRun(prefix: "ferry-localsendd") { home in
            let config = home.url.appendingPathComponent("localsendd.toml")
            let pinLine = pin.map { "pin = \"\($0)\"\n" } ?? ""
            try pinLine.write(to: config, atomically: true, encoding: .utf8)
            var arguments = [
                "--config", config.path, "--port", String(port), "--socket",
                home.url.appendingPathComponent("ctl.sock").path, "--alias", alias, "--download-dir",
                home.url.appendingPathComponent("received", isDirectory: true).path, "--log-level", "info",
                "--no-log-time",
            ]
            arguments.append(unattended ? "--unattended" : "--no-unattended")
            return try LocalSendPeers.start("localsendd", arguments, home: home.url, host: host)
        }
        self.alias = alias
        self.host = host
        downloadDirectory = run.home.url.appendingPathComponent("received", isDirectory: true)
        let line = try run.process.waitForErrorLine(timeout: timeout) { $0.contains(" fingerprint=") }
        guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("fingerprint=") }) else {
            throw TestSupportError.unexpectedOutput(command: run.process.description, detail: line)
        }
        fingerprint = String(field.dropFirst("fingerprint=".count))
    }

    /// SIGTERM (the daemon shuts down its server), SIGKILL after 5 s; idempotent.
    public func stop() {
        run.stop()
    }

    /// Runs `localsendctl --socket SOCKET ARGS...` to completion.
    public func control(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> CommandResult {
        try LocalSendPeers.run(
            "localsendctl", ["--socket", socketPath] + arguments, home: home.url, host: host, timeout: timeout)
    }

    /// What became of a send: `localsendctl`'s exit status and the daemon's result kind (`sent`, `pin_required`,
    /// `declined`, `busy`, `rate_limited`, `peer_error`, `unreachable`, `remote_cancelled`, ...).
    public struct SendOutcome: Sendable, Equatable {
        public var status: Int32
        public var kind: String?
        /// The whole `Last result:` line, with the daemon's detail.
        public var line: String?
    }

    /// Sends `files` (regular files only: localsendd sends no folders and no text) to `target` (an address, alias or
    /// fingerprint it knows) and waits until the transfer ended.
    public func send(
        _ files: [URL], to target: String, pin: String? = nil, timeout: Duration = .seconds(300)
    ) throws -> SendOutcome {
        var arguments = ["send"] + files.map(\.path) + ["--to", target, "--wait", "--quiet"]
        if let pin { arguments += ["--pin", pin] }
        let result = try control(arguments, timeout: timeout)
        let line = result.stdout.split(separator: "\n").map(String.init).last { $0.hasPrefix("Last result: ") }
        let kind = line.map { String($0.dropFirst("Last result: ".count).prefix { $0 != " " }) }
        return SendOutcome(status: result.status, kind: kind, line: line)
    }

    /// `localsendctl status --json`: the daemon's state (`self`, `incoming`, `active`, `result`, `devices`).
    public func state() throws -> [String: Any] {
        let result = try control(["status", "--json"]).requireSuccess()
        guard let data = result.stdout.data(using: .utf8),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw TestSupportError.unexpectedOutput(command: "localsendctl status --json", detail: result.stdout) }
        return object
    }

    /// Waits until the daemon lists a device whose alias is `alias` and returns its entry (`fingerprint`, `ip`,
    /// `port`, `protocol`, `deviceType`, `deviceModel`, `download`).
    ///
    /// Follows `localsendctl watch --json` (a state frame on every change) instead of polling, and stops it before
    /// returning: while it is attached an `--unattended` daemon would not accept transfers on its own.
    public func waitForDevice(alias: String, timeout: Duration = .seconds(60)) throws -> [String: Any] {
        let watcher = try LocalSendPeers.start(
            "localsendctl", ["--socket", socketPath, "watch", "--json"], home: home.url, host: host)
        defer { _ = try? watcher.terminate() }
        var found: [String: Any]?
        _ = try watcher.nextJSON(timeout: timeout) { frame in
            guard frame["type"] as? String == "state", let data = frame["data"] as? [String: Any],
                let devices = data["devices"] as? [[String: Any]]
            else { return false }
            found = devices.first { $0["alias"] as? String == alias }
            return found != nil
        }
        return found ?? [:]
    }

    /// Waits until the daemon's last result is of `kind` (`recv_cancelled`, `received`, ...) and returns it. Follows
    /// `localsendctl watch --json` as `waitForDevice` does (attach it only once a transfer was accepted: while it is
    /// attached an `--unattended` daemon would not accept one on its own).
    public func waitForResult(kind: String, timeout: Duration = .seconds(60)) throws -> [String: Any] {
        let watcher = try LocalSendPeers.start(
            "localsendctl", ["--socket", socketPath, "watch", "--json"], home: home.url, host: host)
        defer { _ = try? watcher.terminate() }
        var found: [String: Any]?
        _ = try watcher.nextJSON(timeout: timeout) { frame in
            guard frame["type"] as? String == "state", let data = frame["data"] as? [String: Any],
                let result = data["result"] as? [String: Any], result["kind"] as? String == kind
            else { return false }
            found = result
            return true
        }
        return found ?? [:]
    }
}
