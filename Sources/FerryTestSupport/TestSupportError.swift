import Glibc

/// Everything that can go wrong in the test support, with what was captured so far.
///
/// Why one type: a failing integration test should print one message that says what the helper
/// waited for, what it ran and what the process printed, so the failure is readable from CI logs.
public enum TestSupportError: Error, CustomStringConvertible, Sendable {
    /// The `ferry` executable was not found; `searched` lists the paths tried.
    case binaryNotFound(name: String, searched: [String])
    /// A system call failed; `call` names it.
    case systemCall(String, errno: Int32)
    /// `posix_spawn` could not start the command.
    case spawnFailed(command: String, errno: Int32)
    /// A wait ran past its deadline; `captured` holds the process output seen so far.
    case timedOut(waitingFor: String, process: String, captured: String)
    /// The stream ended before the awaited line appeared.
    case endOfOutput(waitingFor: String, process: String, captured: String)
    /// A helper command exited with a non-zero status.
    case commandFailed(command: String, status: Int32, stdout: String, stderr: String)
    /// Something a test needs (network namespaces, a tmpfs mount, a command) is missing, and FERRY_REQUIRE_NETNS=1
    /// demands it (`Requirement`).
    case requirementUnmet(what: String, reason: String)
    /// A helper command succeeded but printed something the helper cannot read.
    case unexpectedOutput(command: String, detail: String)

    public var description: String {
        switch self {
        case .binaryNotFound(let name, let searched):
            return "could not find the `\(name)` executable; build it first with `swift build` "
                + "(or set FERRY_BINARY). Searched:\n  " + searched.joined(separator: "\n  ")
        case .systemCall(let call, let errno):
            return "\(call) failed: \(Self.message(errno)) (errno \(errno))"
        case .spawnFailed(let command, let errno):
            return "could not start `\(command)`: \(Self.message(errno)) (errno \(errno))"
        case .timedOut(let waitingFor, let process, let captured):
            return "timed out waiting for \(waitingFor) from \(process)\n\(captured)"
        case .endOfOutput(let waitingFor, let process, let captured):
            return "output ended while waiting for \(waitingFor) from \(process)\n\(captured)"
        case .commandFailed(let command, let status, let stdout, let stderr):
            return "`\(command)` exited with status \(status)\nstdout: \(stdout)\nstderr: \(stderr)"
        case .requirementUnmet(let what, let reason):
            return "FERRY_REQUIRE_NETNS=1 but \(what) cannot be used here: \(reason)"
        case .unexpectedOutput(let command, let detail):
            return "`\(command)` printed something unexpected: \(detail)"
        }
    }

    static func message(_ errno: Int32) -> String {
        guard let text = strerror(errno) else { return "unknown error" }
        return String(cString: text)
    }
}
