import Foundation

/// The real LocalSend implementations the tests run against (issue 29), installed from PyPI by
/// `scripts/localsend-peers` into one virtual environment.
///
/// Why real peers: ferry must meet LocalSend apps it cannot run here; three independent Python implementations
/// (each deviating from the apps in its own way, docs/LOCALSEND.md "Test peers") are the closest stand-ins, and a
/// mock would only repeat our own reading of the protocol.
///
/// Where: `$FERRY_LOCALSEND_VENV`, else the package's `.build/localsend-venv`. Where the venv is missing the tests
/// skip visibly (FERRY_REQUIRE_NETNS=1, as in CI, makes them fail); where the script found no Python 3.12 it wrote
/// its reason into `localsend-unavailable`, and the tests of the `localsend` peer fail with that reason.
public enum LocalSendPeers {
    /// Each implementation, by the command the tests run.
    public enum Kind: String, Sendable, CaseIterable {
        /// `localsendd` 0.1.1 and its control client `localsendctl`.
        case localsendd
        /// `localsend-cli` 0.1.1.
        case localsendCLI = "localsend-cli"
        /// `localsend` 0.1.2 (Python >= 3.12).
        case localsend
    }

    /// The virtual environment of the peers.
    public static var venv: URL {
        if let explicit = ProcessInfo.processInfo.environment["FERRY_LOCALSEND_VENV"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit, isDirectory: true)
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // LocalSend
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()  // package root
        return packageRoot.appendingPathComponent(".build/localsend-venv", isDirectory: true)
    }

    /// The path of a command of the venv (`localsendd`, `localsendctl`, `localsend-cli`, `localsend`).
    public static func executable(_ name: String) -> String {
        venv.appendingPathComponent("bin").appendingPathComponent(name).path
    }

    /// The LocalSend port and multicast group every peer uses.
    public static let port = 53317
    public static let multicastGroup = "224.0.0.167"

    /// True when `kind` can run; false when the test may skip (the venv is not made and nothing demands it).
    ///
    /// Throws when FERRY_REQUIRE_NETNS=1 demands the peers and the venv is missing, and always when the venv exists
    /// but the script could not install `kind` (the `localsend` peer without a Python 3.12): that promise then goes
    /// unchecked, and a failure says so where a skip would hide it.
    public static func requireAvailability(_ kind: Kind, venv: URL = LocalSendPeers.venv) throws -> Bool {
        let command = venv.appendingPathComponent("bin").appendingPathComponent(kind.rawValue).path
        if kind == .localsend {
            let marker = venv.appendingPathComponent("localsend-unavailable")
            if let reason = try? String(contentsOf: marker, encoding: .utf8) {
                throw TestSupportError.requirementUnmet(
                    what: "the `localsend` 0.1.2 test peer",
                    reason: reason.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
        return try Requirement.check(
            "the LocalSend test peer `\(kind.rawValue)`",
            available: FileManager.default.isExecutableFile(atPath: command),
            reason: "\(command) is missing; run scripts/localsend-peers (it makes \(venv.path))")
    }

    /// The prefix that starts a peer's command without the variables that would change its TLS or its
    /// configuration behind the test's back: `requests` lets REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE override
    /// `verify=False` (localsend-cli then refuses every self-signed certificate), and localsendd reads its alias, PIN
    /// and socket from LOCALSEND_ALIAS, LOCALSEND_PIN and LOCALSENDD_SOCKET.
    static let cleanEnvironmentPrefix = [
        "/usr/bin/env", "-u", "REQUESTS_CA_BUNDLE", "-u", "CURL_CA_BUNDLE", "-u", "LOCALSEND_ALIAS", "-u",
        "LOCALSEND_PIN",
        "-u", "LOCALSENDD_SOCKET",
    ]

    /// HOME and the XDG directories of one peer's install, all inside `directory`, so every peer has its own
    /// certificate, fingerprint and configuration, and nothing of the user's is read or written.
    static func isolatedEnvironment(in directory: URL) -> [String: String] {
        [
            "HOME": directory.path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
            "XDG_RUNTIME_DIR": directory.appendingPathComponent("run").path,
            "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path,
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        ]
    }

    /// Starts `command` of the venv, cleaned and isolated (see above), in `host`'s namespace or on this host.
    static func start(
        _ command: String, _ arguments: [String], home: URL, extraEnvironment: [String: String] = [:],
        host: TestHost?
    ) throws -> FerryProcess {
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("run"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let argv = cleanEnvironmentPrefix + [executable(command)] + arguments
        return try FerryProcess(
            executable: argv[0], arguments: Array(argv.dropFirst()),
            environment: isolatedEnvironment(in: home).merging(extraEnvironment) { _, extra in extra },
            namespace: host?.namespace, currentDirectory: home)
    }

    /// Runs `command` of the venv to completion (see `start`).
    static func run(
        _ command: String, _ arguments: [String], home: URL, host: TestHost?, timeout: Duration
    ) throws -> CommandResult {
        let process = try start(command, arguments, home: home, host: host)
        process.closeStdin()
        let status = try process.waitForExit(timeout: timeout)
        return CommandResult(
            status: status, stdout: try process.readAllStdout(timeout: timeout),
            stderr: try process.readAllStderr(timeout: timeout), command: process.commandLine)
    }
}
