/// A file's modification time: seconds since the Unix epoch and nanoseconds within that second.
///
/// Sent so the receiver can set the time on the published file and key resumable staged data by it (a file
/// that changed on the sender's side is not resumed). Signed seconds, as `st_mtim.tv_sec`, so times before
/// 1970 survive. On the wire: `seconds i64 | nanoseconds u32`, nanoseconds below 1 000 000 000.
public struct FileTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Nanoseconds per second; `nanoseconds` must stay below it.
    public static let nanosecondsPerSecond: UInt32 = 1_000_000_000

    /// Seconds since 1970 (negative before).
    public var seconds: Int64
    /// Nanoseconds within the second, below `nanosecondsPerSecond`.
    public var nanoseconds: UInt32

    /// The time `seconds` + `nanoseconds`; `validate()` checks the nanoseconds.
    public init(seconds: Int64, nanoseconds: UInt32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Throws `invalidField` when `nanoseconds` is 1 000 000 000 or more.
    public func validate() throws(WireError) {
        guard nanoseconds < Self.nanosecondsPerSecond else {
            throw .invalidField("mtimeNanos: \(nanoseconds), not below 1000000000")
        }
    }

    /// Orders by seconds, then nanoseconds.
    public static func < (lhs: FileTime, rhs: FileTime) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// Seconds and nine digits of nanoseconds, e.g. "1767225600.500000000".
    public var description: String {
        let digits = String(nanoseconds)
        return "\(seconds)." + String(repeating: "0", count: max(0, 9 - digits.count)) + digits
    }
}
