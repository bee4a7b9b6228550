@testable import FerryCLI

/// What one in-process run of a command line printed and returned.
struct FerryRun: Equatable {
    var code: ExitCode
    var stdout: String
    var stderr: String

    /// Runs `ferry <arguments>` (or another root's commands) in-process with capturing sinks.
    static func run(
        _ arguments: [String], root: RootCommand = FerryCommand.root, environment: [String: String] = [:]
    ) async -> FerryRun {
        let out = CapturingTextSink()
        let err = CapturingTextSink()
        let context = CommandContext(stdout: out, stderr: err, environment: environment)
        let code = await FerryCommand.main(arguments: ["ferry"] + arguments, context: context, root: root)
        return FerryRun(code: code, stdout: out.text, stderr: err.text)
    }

    /// A usage error: nothing on stdout, exit 64, and exactly `stderr`.
    static func usageError(_ stderr: String) -> FerryRun {
        FerryRun(code: .usage, stdout: "", stderr: stderr + "\n")
    }

    /// Help or version: exactly `stdout`, nothing on stderr, exit 0.
    static func printed(_ stdout: String) -> FerryRun {
        FerryRun(code: .success, stdout: stdout + "\n", stderr: "")
    }
}

/// Parses a `ferry` command line (in `environment`) into the command it would run, or the usage error it would
/// report.
func parseCommand(_ arguments: [String], environment: [String: String] = [:]) throws -> any ParsableCommand {
    let invocation: CommandLineParser.Invocation
    do {
        invocation = try CommandLineParser(root: FerryCommand.root, environment: environment).parse(arguments)
    } catch {
        throw error.error
    }
    guard case .run(let command) = invocation else {
        throw CLIError.failure("not a run invocation: \(invocation)")
    }
    return command
}
