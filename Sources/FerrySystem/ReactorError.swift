/// Why an operation on a reactor-owned descriptor ended without a result.
///
/// Why: these are the outcomes that are not system-call failures: the caller (or another task) closed
/// the descriptor, a deadline passed, or the whole reactor was shut down. Callers match on them to tell
/// an orderly close from a broken link.
public enum ReactorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The descriptor was closed (by `close()`) before or while the operation was pending.
    case closed
    /// The operation's deadline passed (e.g. `connectTCP(to:timeout:)`).
    case timedOut
    /// The reactor was shut down; every descriptor it owned is closed.
    case reactorShutDown

    /// What failed, with the call's name, for logs and error messages.
    public var description: String {
        switch self {
        case .closed: return "descriptor closed"
        case .timedOut: return "timed out"
        case .reactorShutDown: return "reactor shut down"
        }
    }
}
