/// The outcome of a short helper command: exit status and everything it printed.
///
/// Why: test-bed set-up (`ip`, `tc`) and ad-hoc checks (`ping`) need the status and both
/// streams at once, and a failing command should say what it printed.
public struct CommandResult: Sendable, Equatable {
    /// Exit code, or 128 + signal number.
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// The command line as run.
    public var command: [String]

    public init(status: Int32, stdout: String, stderr: String, command: [String]) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.command = command
    }

    /// Returns self when the status is 0, else throws `TestSupportError.commandFailed`.
    @discardableResult
    public func requireSuccess() throws -> CommandResult {
        guard status == 0 else {
            throw TestSupportError.commandFailed(
                command: command.joined(separator: " "), status: status,
                stdout: stdout, stderr: stderr)
        }
        return self
    }
}

extension FerryProcess {
    /// Runs a command to completion, feeding it `input` on stdin, and returns status and output.
    public static func run(
        _ executable: String, _ arguments: [String] = [], input: String = "",
        namespace: String? = nil, timeout: Duration = .seconds(60)
    ) throws -> CommandResult {
        let process = try FerryProcess(executable: executable, arguments: arguments, namespace: namespace)
        if !input.isEmpty { try? process.writeToStdin(input) }
        process.closeStdin()
        let status = try process.waitForExit(timeout: timeout)
        let stdout = try process.readAllStdout(timeout: timeout)
        let stderr = try process.readAllStderr(timeout: timeout)
        return CommandResult(status: status, stdout: stdout, stderr: stderr, command: process.commandLine)
    }
}
