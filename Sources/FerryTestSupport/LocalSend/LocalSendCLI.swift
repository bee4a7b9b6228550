import Foundation

/// `localsend-cli` 0.1.1 as a test peer: a receiver (`receive --json`, which accepts everything), a one-shot sender
/// (`send`) and a scan.
///
/// Why this shape: its receiver is a single-threaded server on the fixed port 53317 that prints one JSON object a line
/// per event (`ready`, `device`, `incoming`, `saved`, `text`, `cancelled`); its sender reads each whole file into
/// memory and posts it with a Content-Length (never chunked), with no client certificate and no PIN.
///
/// Commands (HOME in the peer's own directory: its certificate is `~/.config/localsend-cli/cert.pem`):
///
///     localsend-cli receive --output DIR/received --json [--pin PIN]
///     localsend-cli send ADDRESS FILE... --port 53317 --json
///     localsend-cli scan --timeout SECONDS --json
///
/// Each runs under `env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE`: `requests` lets those override its
/// `verify=False`, and the sender then refuses every self-signed certificate.
public final class LocalSendCLIReceiver: Sendable {
    /// The receiver's process.
    public var process: FerryProcess { run.process }
    /// Where received files land (`--output`).
    public let outputDirectory: URL
    public let host: TestHost?
    private let run: LocalSendPeerRun

    /// Starts the receiver and returns once it printed `{"event": "ready", ...}` (its HTTPS socket is bound by then).
    ///
    /// The PIN goes on its command line: localsend-cli has no other way to take one.
    public init(on host: TestHost?, pin: String? = nil, timeout: Duration = .seconds(60)) throws {
        run = try LocalSendPeerRun(prefix: "ferry-localsend-cli") { home in
            var arguments = ["receive", "--output", Self.outputDirectory(in: home).path, "--json"]
            if let pin { arguments += ["--pin", pin] }
            return try LocalSendPeers.start("localsend-cli", arguments, home: home.url, host: host)
        }
        self.host = host
        outputDirectory = Self.outputDirectory(in: run.home)
        _ = try run.process.nextJSON(timeout: timeout) { $0["event"] as? String == "ready" }
    }

    private static func outputDirectory(in home: TemporaryDirectory) -> URL {
        home.url.appendingPathComponent("received", isDirectory: true)
    }

    /// SIGTERM, SIGKILL after 5 s; idempotent.
    public func stop() {
        run.stop()
    }

    /// Waits for the next `saved` event and returns it (`name`, `path`, `sender`, `size`); the file is complete
    /// then (the receiver writes it whole before printing).
    public func waitForSaved(timeout: Duration = .seconds(120)) throws -> [String: Any] {
        try process.nextJSON(timeout: timeout) { $0["event"] as? String == "saved" }
    }

    /// Waits for the next event named `event` (`incoming`, `text`, `cancelled`, `device`).
    public func waitForEvent(_ event: String, timeout: Duration = .seconds(60)) throws -> [String: Any] {
        try process.nextJSON(timeout: timeout) { $0["event"] as? String == event }
    }
}

/// The one-shot commands of `localsend-cli`.
public enum LocalSendCLI {
    /// What a `localsend-cli send` printed and how it ended.
    public struct SendOutcome: Sendable {
        public var status: Int32
        /// Its JSON events in order (`preparing`, `session`, `sending`, `sent`, `error`, `done`), as JSON text.
        public var events: [String]
        public var stderr: String

        /// The names of the `sent` events.
        public var sentNames: [String] {
            objects.filter { $0["event"] as? String == "sent" }.compactMap { $0["name"] as? String }
        }

        /// The messages of the `error` events. Note: an upload answered with an error still exits 0.
        public var errors: [String] {
            objects.filter { $0["event"] as? String == "error" }.compactMap { $0["message"] as? String }
        }

        private var objects: [[String: Any]] {
            events.compactMap { line in
                line.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            }
        }
    }

    /// Sends `files` (regular files only) to `address`:`port` from `host` and waits for the command to end.
    public static func send(
        _ files: [URL], to address: String, port: Int = LocalSendPeers.port, from host: TestHost?,
        timeout: Duration = .seconds(300)
    ) throws -> SendOutcome {
        try TemporaryDirectory.withSync(prefix: "ferry-localsend-cli") { home in
            let result = try LocalSendPeers.run(
                "localsend-cli", ["send", address] + files.map(\.path) + ["--port", String(port), "--json"],
                home: home.url, host: host, timeout: timeout)
            let events = result.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("{") }
            return SendOutcome(status: result.status, events: events, stderr: result.stderr)
        }
    }

    /// `localsend-cli scan --timeout SECONDS --json` from `host`: the devices that answered its one announcement
    /// (by a register call or a UDP reply), one JSON object each (`alias`, `ip`, `type`, `model`, `download`,
    /// `port`). It binds UDP and TCP 53317 itself, so nothing else on `host` may hold the port.
    public static func scan(from host: TestHost?, seconds: Int = 3) throws -> [[String: Any]] {
        try TemporaryDirectory.withSync(prefix: "ferry-localsend-cli") { home in
            let result = try LocalSendPeers.run(
                "localsend-cli", ["scan", "--timeout", String(seconds), "--json"], home: home.url, host: host,
                timeout: .seconds(seconds + 60)
            ).requireSuccess()
            return result.stdout.split(separator: "\n").compactMap { line in
                line.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            }
        }
    }
}

extension TemporaryDirectory {
    /// Runs `body` with a new directory and removes it afterwards, also when `body` throws.
    static func withSync<T>(prefix: String, _ body: (TemporaryDirectory) throws -> T) throws -> T {
        let directory = try TemporaryDirectory(prefix: prefix)
        defer { directory.remove() }
        return try body(directory)
    }
}
