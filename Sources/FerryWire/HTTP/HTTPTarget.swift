/// A request target split into its path and its query parameters, percent-decoded and bounded.
///
/// The query is decoded as `application/x-www-form-urlencoded`, the way every LocalSend app builds and reads it
/// (Dart's `Uri.queryParameters` and Rust's `form_urlencoded` both read `+` as a space; the apps write a space
/// as `+` and a `+` as `%2B`): `+` is a space, `%XX` is that byte, and the decoded bytes must be UTF-8. Unlike those
/// parsers, an invalid escape (`%zz`, a lone `%`) is refused here, not passed through: no LocalSend value (UUIDs,
/// hex tokens, digits) needs one, and a value the peer did not mean is worse than a 400.
///
/// `path` stays as sent (routes are compared as ASCII and a decoded `/` would change them).
public struct HTTPTarget: Equatable, Sendable {
    /// The target up to `?` (or all of it).
    public var path: String
    /// The decoded query parameters in order; a name may repeat (`value(for:)` refuses that).
    public var query: [(name: String, value: String)]

    /// Most query parameters in one target (414 above): LocalSend's longest query has four.
    public static let maxQueryParameters = 32

    /// Splits and decodes `target` (origin-form, as `HTTPRequestDecoder` checked it).
    public init(_ target: String) throws(HTTPError) {
        let bytes = Array(target.utf8)
        let mark = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        path = String(decoding: bytes[..<mark], as: UTF8.self)
        query = []
        guard mark < bytes.count else { return }
        let pairs = bytes[(mark + 1)...].split(separator: UInt8(ascii: "&"))
        guard pairs.count <= Self.maxQueryParameters else { throw .targetTooLong(limit: Self.maxQueryParameters) }
        for pair in pairs {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let name = try Self.decode(pair[..<equals])
            let value = equals < pair.endIndex ? try Self.decode(pair[(equals + 1)...]) : ""
            query.append((name, value))
        }
    }

    /// The value of the one parameter called `name` (exact, case-sensitive), nil when absent; a repeated name is
    /// refused, since which one a peer meant is unknowable.
    public func value(for name: String) throws(HTTPError) -> String? {
        let values = query.filter { $0.name == name }
        guard values.count <= 1 else { throw .malformed("query: \(name) given \(values.count) times") }
        return values.first?.value
    }

    /// Form-decodes one name or value: `+` is a space, `%XX` a byte; the result must be UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard bytes.endIndex - index >= 3,
                    let high = HTTPRequestDecoder.hexValue(bytes[index + 1]),
                    let low = HTTPRequestDecoder.hexValue(bytes[index + 2])
                else { throw .malformed("query: invalid percent escape") }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(byte == UInt8(ascii: "+") ? HTTPSyntax.space : byte)
                index += 1
            }
        }
        guard let text = String(validating: decoded, as: UTF8.self) else {
            throw .malformed("query: decodes to invalid UTF-8")
        }
        return text
    }

    public static func == (lhs: HTTPTarget, rhs: HTTPTarget) -> Bool {
        lhs.path == rhs.path && lhs.query.count == rhs.query.count
            && zip(lhs.query, rhs.query).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
