import Foundation

/// An error the CLI reports to the user as one `Error: <message>` line on stderr.
///
/// Every failure that reaches the user goes through this type so that it looks the same everywhere: one line that
/// names the problem and, where possible, what to do about it. The exit code tells scripts what kind of failure it
/// was: a usage error (64) also prints the command's usage line; a runtime failure (1) prints only the message.
public struct CLIError: Error, LocalizedError, Sendable, Equatable, CustomStringConvertible {
    /// The text after `Error: `; one line, no trailing period needed.
    public var message: String
    /// The status the process exits with.
    public var exitCode: ExitCode

    /// An error with any exit code; prefer `usage(_:)` or `failure(_:)`, which pick the code for the kind of failure.
    public init(message: String, exitCode: ExitCode) {
        self.message = message
        self.exitCode = exitCode
    }

    /// The command line is wrong (exit 64); the usage of the command is printed after the message.
    public static func usage(_ message: String) -> CLIError {
        CLIError(message: message, exitCode: .usage)
    }

    /// The command failed while running (exit 1).
    public static func failure(_ message: String) -> CLIError {
        CLIError(message: message, exitCode: .failure)
    }

    /// Whether the usage line is printed after the message.
    public var isUsageError: Bool {
        exitCode == .usage
    }

    /// The message, so that `localizedDescription` shows the same line as the CLI.
    public var errorDescription: String? {
        message
    }

    /// The message alone, without the `Error: ` prefix.
    public var description: String {
        message
    }
}
