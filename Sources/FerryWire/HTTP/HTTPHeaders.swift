/// The header fields of a request or response, in the order they came, names as sent.
///
/// Lookups are case-insensitive (field names are, RFC 9110 5.1). Values are kept as their bytes were, minus the
/// optional whitespace around them, so nothing is lost or normalised behind the caller's back.
public struct HTTPHeaders: Equatable, Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)] = []

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    public var count: Int { fields.count }

    public mutating func add(name: String, value: String) {
        fields.append((name, value))
    }

    /// Every value of the fields called `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equalIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The elements of the comma-separated list fields called `name`, trimmed, empty elements dropped.
    public func listElements(for name: String) -> [String] {
        values(for: name).flatMap { value in
            value.split(separator: ",").map { HTTPSyntax.trimmed(Substring($0)) }.filter { !$0.isEmpty }
        }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// ASCII case-insensitive comparison (field names and tokens are ASCII).
    static func equalIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        return left.count == right.count && zip(left, right).allSatisfy { HTTPSyntax.lower($0) == HTTPSyntax.lower($1) }
    }
}
