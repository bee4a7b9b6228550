/// A point in time as the file system stores it: seconds since the Unix epoch and nanoseconds.
///
/// Why: modification times travel in transfer offers and are restored on the received file; keeping the
/// kernel's two fields (instead of a `Double` or `Date`) preserves them exactly, to the nanosecond.
public struct FileTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Whole seconds since 1970-01-01T00:00:00Z (negative before it).
    public var seconds: Int64
    /// Nanoseconds within the second, 0..<1_000_000_000.
    public var nanoseconds: UInt32

    /// A timestamp of `seconds` and `nanoseconds`.
    public init(seconds: Int64, nanoseconds: UInt32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Orders by seconds, then nanoseconds.
    public static func < (lhs: FileTimestamp, rhs: FileTimestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `"<seconds>.<nanoseconds, 9 digits>"`.
    public var description: String {
        let fraction = String(nanoseconds)
        return "\(seconds).\(String(repeating: "0", count: max(0, 9 - fraction.count)))\(fraction)"
    }
}
