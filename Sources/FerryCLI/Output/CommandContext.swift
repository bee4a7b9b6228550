import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a command may see of its process: where to write, which ends are terminals, the environment.
///
/// The CLI is the only layer that prints or reads the environment, and it does so only through this value. The
/// real one (`live()`) writes to the process's stdout and stderr; tests build one around `CapturingTextSink`s and a
/// fixed environment, so every command can be run in-process and its output pinned exactly.
public struct CommandContext: Sendable {
    /// Results: peer lists, chat lines, JSON lines.
    public var stdout: any TextSink
    /// Diagnostics: errors, `-v` logs, progress.
    public var stderr: any TextSink
    /// Whether stdout is a terminal (colours, tables); `false` when piped or captured.
    public var isStdoutTerminal: Bool
    /// Whether stderr is a terminal (progress bars only then).
    public var isStderrTerminal: Bool
    /// Whether stdin is a terminal: questions (the peer picker, "Accept?") are asked only then.
    public var isStdinTerminal: Bool
    /// The environment variables of the process.
    public var environment: [String: String]
    /// Whether `FerryCommand.main` installs process-wide signal handling: SIGINT cancels the running command (exit
    /// 130) and SIGPIPE is ignored. Only the real process wants that; in-process tests leave it off.
    public var trapsSignals: Bool

    /// A context around the given sinks; by default nothing is a terminal, the environment is empty and signals are
    /// not trapped, as tests want.
    public init(
        stdout: any TextSink,
        stderr: any TextSink,
        isStdoutTerminal: Bool = false,
        isStderrTerminal: Bool = false,
        isStdinTerminal: Bool = false,
        environment: [String: String] = [:],
        trapsSignals: Bool = false
    ) {
        self.stdout = stdout
        self.stderr = stderr
        self.isStdoutTerminal = isStdoutTerminal
        self.isStderrTerminal = isStderrTerminal
        self.isStdinTerminal = isStdinTerminal
        self.environment = environment
        self.trapsSignals = trapsSignals
    }

    /// The context of the running `ferry` process: its stdout and stderr, their terminal-ness, its environment.
    public static func live() -> CommandContext {
        CommandContext(
            stdout: FileHandleTextSink.standardOutput,
            stderr: FileHandleTextSink.standardError,
            isStdoutTerminal: isatty(STDOUT_FILENO) == 1,
            isStderrTerminal: isatty(STDERR_FILENO) == 1,
            isStdinTerminal: isatty(STDIN_FILENO) == 1,
            environment: ProcessInfo.processInfo.environment,
            trapsSignals: true
        )
    }
}
