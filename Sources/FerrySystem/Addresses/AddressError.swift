/// Why a textual address could not be turned into a `SocketAddress`.
///
/// Why: addresses come from users (`--peer HOST:PORT`), so the error must say what was wrong with the
/// text and what form is expected, apart from system-call failures.
public enum AddressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not of the form `HOST:PORT` / `[IPV6]:PORT` (or `HOST` with a default port).
    case invalidSyntax(input: String, expected: String)
    /// The port is not a number in 0...65535.
    case invalidPort(input: String)
    /// The host name did not resolve (`getaddrinfo(3)`); `reason` is the resolver's message.
    case unknownHost(host: String, reason: String)

    /// What was wrong with the address, for error messages.
    public var description: String {
        switch self {
        case .invalidSyntax(let input, let expected):
            return "invalid address \"\(input)\": expected \(expected)"
        case .invalidPort(let input):
            return "invalid port in \"\(input)\": expected a number from 0 to 65535"
        case .unknownHost(let host, let reason):
            return "unknown host \"\(host)\": \(reason)"
        }
    }
}
