import Foundation

/// `localsend` 0.1.2 (the `localsend` command of the `localsend[cli]` package; Python >= 3.12) as a test peer.
///
/// Why this shape: it is the only PyPI peer that uploads with chunked bodies and asks `/api/localsend/v1/info`
/// before sending, as older apps do. Its `receive` accepts every file of every sender, with no consent, PIN or
/// session limit, into `~/Downloads/<fileName>` (the name as sent, folders created); its `send PATH` uploads PATH to
/// every device that announces itself or registers with it, and runs until stopped.
///
/// Commands (HOME and XDG_* in the peer's own directory; `LOCALSEND_HTTP_SERVER__DEV_MODE=true` runs uvicorn on
/// asyncio, as the package does not bring uvloop; `LOCALSEND_INFO__ALIAS` names it):
///
///     localsend receive
///     localsend send PATH
///
/// Its multicast socket wants the namespace's default gateway (python-netifaces), so the host gets a default route
/// through an address no host uses (`.254` of the bed's /24) before it starts.
public final class LocalSendApp: Sendable {
    public enum Mode: Sendable {
        case receive
        case send(URL)
    }

    /// The app's process.
    public var process: FerryProcess { run.process }
    public let alias: String
    public let host: TestHost
    /// Where `receive` puts files (`~/Downloads` of its HOME).
    public let downloadDirectory: URL
    private let run: LocalSendPeerRun

    /// Starts `localsend receive` or `localsend send PATH` on `host` and returns once uvicorn serves HTTPS and the
    /// multicast socket listens.
    public init(_ mode: Mode, alias: String, on host: TestHost, timeout: Duration = .seconds(60)) throws {
        try Self.addDefaultRoute(on: host)
        let arguments: [String]
        switch mode {
        case .receive: arguments = ["receive"]
        case .send(let file): arguments = ["send", file.path]
        }
        run = try LocalSendPeerRun(prefix: "ferry-localsend") { home in
            try LocalSendPeers.start(
                "localsend", arguments, home: home.url,
                extraEnvironment: ["LOCALSEND_HTTP_SERVER__DEV_MODE": "true", "LOCALSEND_INFO__ALIAS": alias],
                host: host)
        }
        self.alias = alias
        self.host = host
        downloadDirectory = run.home.url.appendingPathComponent("Downloads", isDirectory: true)
        // Ready when uvicorn serves (its log goes to stderr) and the multicast socket has joined the group (the
        // package's log and uvicorn's access log go to stdout): `send` announces only once, so an announcement
        // made before the other side listens is lost for good.
        _ = try run.process.waitForErrorLine(timeout: timeout) { $0.contains("Uvicorn running on") }
        _ = try run.process.waitForLine(timeout: timeout) { $0.contains("Waiting for multicast messages") }
    }

    /// SIGTERM, SIGKILL after 5 s; idempotent.
    public func stop() {
        run.stop()
    }

    /// Waits until its access log (stdout) shows an upload answered 200 (`POST /api/localsend/v2/upload ... 200`):
    /// the file is written and closed by then.
    public func waitForUpload(timeout: Duration = .seconds(120)) throws -> String {
        try process.waitForLine(timeout: timeout) {
            $0.contains("/api/localsend/v2/upload") && $0.contains(" 200")
        }
    }

    /// `ip route replace default via <bed's /24>.254 dev eth0` in `host`'s namespace.
    static func addDefaultRoute(on host: TestHost) throws {
        let parts = host.address.split(separator: ".")
        guard parts.count == 4 else {
            throw TestSupportError.unexpectedOutput(command: "default route", detail: "not IPv4: \(host.address)")
        }
        let gateway = parts.prefix(3).joined(separator: ".") + ".254"
        _ = try FerryProcess.run(
            "ip", ["-n", host.namespace, "route", "replace", "default", "via", gateway, "dev", host.interface]
        ).requireSuccess()
    }
}
