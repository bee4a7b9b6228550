/// A failed system call: which call, and the `errno` it set.
///
/// Why: an errno alone ("Address already in use") does not say what was attempted; naming the call
/// (`bind(): Address already in use`) makes logs and CLI messages actionable.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    /// The C call that failed, with parentheses, e.g. `"connect()"`.
    public var call: String
    /// The error number the call set.
    public var errno: Errno

    /// A failure of `call` with `errno`.
    public init(call: String, errno: Errno) {
        self.call = call
        self.errno = errno
    }

    /// `"<call>: <strerror>"`, e.g. `"bind(): Address already in use"`.
    public var description: String { "\(call): \(errno)" }
}
