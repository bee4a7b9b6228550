#if canImport(Glibc)
    import Glibc
#endif

/// The options every `ferry` command accepts, before or after the subcommand.
///
/// They describe who this process is on the network (session ID, display name, port) and how it finds peers
/// (multicast on some interfaces, or fixed addresses), which every command that talks to peers needs alike.
/// Values are checked by `validate()` against the same limits the wire format enforces, so a bad value is a
/// usage error here rather than a protocol error later.
public struct GlobalOptions: Sendable, Equatable {
    /// The port a session listens on when `--port` is not given (and falls back from when it is taken).
    public static let defaultPort: UInt16 = 41971
    /// The session ID when `--session` is not given.
    public static let defaultSession = "ferry"
    /// Longest session ID and display name, in UTF-8 bytes (the wire format's limit).
    public static let maximumNameBytes = 64

    /// Session ID; peers with another ID never see each other.
    public var session: String
    /// Display name shown to other peers; `nil` means the host name (see `displayName`).
    public var name: String?
    /// TCP port to accept links on, as given; `nil` means `defaultPort`, falling back to a free port when taken.
    public var port: UInt16?
    /// Addresses (`host:port`, `[v6]:port`) to connect to directly, in order.
    public var peers: [String]
    /// Interfaces to discover peers on; empty means every multicast-capable interface.
    public var interfaces: [String]
    /// How many times `-v` was given: 0 quiet, 1 protocol events, 2 and more everything.
    public var verbose: Int
    /// The environment variable each option took its value from, by option name (`"interface": "FERRY_INTERFACE"`):
    /// only for the options a variable set. An error that such a value causes later (an interface that is not
    /// there) names the variable, which the person may have forgotten they set, instead of a flag they never typed.
    public var variables: [String: String] = [:]

    /// Options as given; the defaults are those of a command line without them. Checked by `validate()`, not here.
    public init(
        session: String = GlobalOptions.defaultSession,
        name: String? = nil,
        port: UInt16? = nil,
        peers: [String] = [],
        interfaces: [String] = [],
        verbose: Int = 0
    ) {
        self.session = session
        self.name = name
        self.port = port
        self.peers = peers
        self.interfaces = interfaces
        self.verbose = verbose
    }

    /// Whether `--port` was given; if not, a taken default port is replaced by a free one instead of failing.
    public var portIsExplicit: Bool {
        port != nil
    }

    /// The name to announce: `--name`, else the host name.
    public var displayName: String {
        name ?? Self.hostName()
    }

    /// The options as help lists them under `GLOBAL OPTIONS:`, and as the parser accepts them.
    public static let definitions: [OptionDefinition] = [
        .option(
            "session",
            valueName: "id",
            help: "Session ID; peers with another ID never see each other.",
            default: "$\(sessionVariable), else \(defaultSession)"
        ),
        .option(
            "name",
            valueName: "name",
            help: "Display name shown to other peers.",
            default: "$\(nameVariable), else the host name"
        ),
        .option(
            "port",
            valueName: "n",
            help: "TCP port to accept links on; 0 picks any free port.",
            default: "\(defaultPort), falling back to a free port when taken"
        ),
        .repeating(
            "peer",
            valueName: "host:port",
            help: "Connect to this address directly, for networks where multicast does not pass. Repeatable."
        ),
        .repeating(
            "interface",
            valueName: "name",
            help: "Discover peers only on this network interface (e.g. lo). Repeatable.",
            default: "$\(interfaceVariable), comma-separated, else every multicast-capable interface"
        ),
        .counter("verbose", short: "v", help: "Log protocol events to stderr. Repeat for more detail."),
    ]

    /// Reads the global options from scanned values; only conversions here, limits in `validate()`.
    public init(parsing values: ParsedValues) throws {
        self.init(
            session: values.last("session") ?? Self.defaultSession,
            name: values.last("name"),
            port: try values.parse("port", as: "port (0-65535)") { UInt16($0) },
            peers: values.all("peer"),
            interfaces: values.all("interface"),
            verbose: values.count("verbose")
        )
    }

    /// The environment variable that gives `--session` its default.
    public static let sessionVariable = "FERRY_SESSION"
    /// The environment variable that gives `--name` its default.
    public static let nameVariable = "FERRY_NAME"
    /// The environment variable that gives `--interface` its default: one name, or several separated by commas
    /// (spaces around them are ignored).
    public static let interfaceVariable = "FERRY_INTERFACE"

    /// Fills in, from `environment`, each of `--session`, `--name` and `--interface` that `given` (the scanned
    /// command line) does not set: a flag overrides its variable. A variable that is set but invalid is a usage
    /// error naming the variable, checked only when it is used.
    ///
    /// The command line is not rewritten on purpose: `trust add --name` reads its own `--name` from the scanned
    /// values, and `FERRY_NAME` must not become the name a peer is pinned under.
    public mutating func applyEnvironment(_ environment: [String: String], given: ParsedValues) throws {
        if !given.isSet("session"), let value = environment[Self.sessionVariable] {
            try Self.validateName(value, variable: Self.sessionVariable, what: "a session ID")
            session = value
            variables["session"] = Self.sessionVariable
        }
        if !given.isSet("name"), let value = environment[Self.nameVariable] {
            try Self.validateName(value, variable: Self.nameVariable, what: "a display name")
            name = value
            variables["name"] = Self.nameVariable
        }
        if !given.isSet("interface"), let value = environment[Self.interfaceVariable] {
            let variable = Self.interfaceVariable
            let names = value.split { $0 == "," || $0.isWhitespace }.map(String.init)
            guard !names.isEmpty else {
                throw CLIError.usage(
                    "\(variable) is empty; unset it or set interface names separated by commas (e.g. lo or eth0,wlan0)"
                )
            }
            for name in names where !Self.isValidInterfaceName(name) {
                throw CLIError.usage(
                    "\(variable): '\(TerminalText.excerpt(name))' is not a valid interface name (1 to 15 bytes "
                        + "without '/', ':' or spaces); unset it or set names separated by commas, e.g. lo or eth0,wlan0"
                )
            }
            interfaces = names
            variables["interface"] = Self.interfaceVariable
        }
    }

    /// Checks a name given by an environment variable; the error names the variable and what to do.
    private static func validateName(_ value: String, variable: String, what: String) throws {
        let bytes = value.utf8.count
        guard bytes > 0 else {
            throw CLIError.usage("\(variable) is empty; unset it or set \(what) of 1-\(maximumNameBytes) bytes")
        }
        guard bytes <= maximumNameBytes else {
            throw CLIError.usage(
                "\(variable) is \(bytes) bytes long; unset it or set \(what) of 1-\(maximumNameBytes) bytes"
            )
        }
        guard !value.unicodeScalars.contains(where: TerminalText.needsEscape) else {
            throw CLIError.usage("\(variable) contains control characters; unset it or set \(what) without them")
        }
    }

    /// Checks the values against the limits of the wire format and of Linux.
    public func validate() throws {
        try Self.validateName(session, option: "session", what: "a session ID")
        if let name {
            try Self.validateName(name, option: "name", what: "a display name")
        }
        for peer in peers where Self.splitHostPort(peer) == nil {
            throw CLIError.usage(
                "--peer: '\(TerminalText.excerpt(peer))' is not a valid address; use HOST:PORT, "
                    + "e.g. 192.168.1.20:\(Self.defaultPort) or [fe80::1%eth0]:\(Self.defaultPort)"
            )
        }
        for interface in interfaces where !Self.isValidInterfaceName(interface) {
            throw CLIError.usage(
                "--interface: '\(TerminalText.excerpt(interface))' is not a valid interface name "
                    + "(1 to 15 bytes without '/', ':' or spaces, e.g. lo or eth0)"
            )
        }
    }

    private static func validateName(_ value: String, option: String, what: String) throws {
        let bytes = value.utf8.count
        guard (1...maximumNameBytes).contains(bytes) else {
            throw CLIError.usage(
                "--\(option): \(what) must be 1 to \(maximumNameBytes) UTF-8 bytes (got \(bytes))"
            )
        }
        guard !value.unicodeScalars.contains(where: TerminalText.needsEscape) else {
            throw CLIError.usage("--\(option): \(what) must not contain control characters")
        }
    }

    /// Splits `host:port` or `[ipv6]:port` into its parts; `nil` when the host is empty, an unbracketed IPv6
    /// address, or the port is not 1-65535.
    public static func splitHostPort(_ address: String) -> (host: String, port: UInt16)? {
        guard let colon = address.lastIndex(of: ":") else {
            return nil
        }
        var host = address[..<colon]
        let portText = address[address.index(after: colon)...]
        guard let port = UInt16(portText), port != 0 else {
            return nil
        }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else {
                return nil
            }
            host = host.dropFirst().dropLast()
        } else if host.contains(":") {
            return nil
        }
        guard !host.isEmpty, host.utf8.count <= 253,
            !host.unicodeScalars.contains(where: { TerminalText.needsEscape($0) || $0 == " " })
        else {
            return nil
        }
        return (String(host), port)
    }

    /// Whether `name` can be a Linux interface name (`IFNAMSIZ` is 16 with the terminating NUL).
    static func isValidInterfaceName(_ name: String) -> Bool {
        (1...15).contains(name.utf8.count)
            && !name.unicodeScalars.contains { $0 == "/" || $0 == " " || $0 == ":" || TerminalText.needsEscape($0) }
    }

    /// The host name from `gethostname(2)`, cut to `maximumNameBytes` on a character boundary; `ferry` when unset.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else {
            return "ferry"
        }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        var name = String(decoding: bytes, as: UTF8.self)
        while name.utf8.count > maximumNameBytes {
            name.removeLast()
        }
        name = String(name.unicodeScalars.filter { !TerminalText.needsEscape($0) })
        return name.isEmpty ? "ferry" : name
    }
}
