import Foundation
import Synchronization

/// Runs one command line from start to end: parse, print help or errors, run the command, choose the exit code.
///
/// This is where the CLI's conventions live, once for every command: usage errors print `Error:`, the usage
/// line and a hint on stderr and exit 64; runtime errors print one `Error:` line and exit 1; help and version go
/// to stdout and exit 0; Ctrl-C cancels the command's task and the process exits 130, SIGTERM likewise with 143.
struct CommandRunner {
    let root: RootCommand
    let context: CommandContext

    func run(arguments: [String]) async -> ExitCode {
        if context.trapsSignals {
            SignalTrap.ignoreBrokenPipes()
        }
        let formatter = HelpFormatter(root: root)
        let invocation: CommandLineParser.Invocation
        do {
            invocation = try CommandLineParser(root: root, environment: context.environment).parse(
                Array(arguments.dropFirst()))
        } catch {
            report(error.error, command: error.command)
            return error.error.exitCode
        }
        switch invocation {
        case .rootHelp:
            context.stdout.write(formatter.rootHelp())
            return .success
        case .help(let command):
            context.stdout.write(formatter.help(for: command))
            return .success
        case .manPage:
            context.stdout.write(ManPageFormatter(root: root).page())
            return .success
        case .version:
            context.stdout.writeLine("\(root.commandName) \(root.version)")
            return .success
        case .run(let command):
            return await execute(command)
        }
    }

    /// Runs `command` in its own task so that SIGINT and SIGTERM can cancel it.
    private func execute(_ command: any ParsableCommand) async -> ExitCode {
        let context = self.context
        // The trap goes in before the command starts, so that a signal sent as soon as the command has said anything
        // (a test waits for "listening", then sends SIGINT) finds it; one that comes before the task exists cancels
        // the task as it is made.
        let started = Mutex<(task: Task<ExitCode, any Error>?, interrupted: Bool)>((nil, false))
        let trap =
            context.trapsSignals
            ? SignalTrap.install {
                started.withLock { started in
                    started.interrupted = true
                    started.task?.cancel()
                }
            } : nil
        let task = Task {
            try await command.run(context: context)
        }
        started.withLock { started in
            started.task = task
            if started.interrupted { task.cancel() }
        }
        let result = await task.result
        let interruption = trap?.interruption
        trap?.uninstall()
        switch result {
        case .success(let code):
            return interruption ?? code
        case .failure(let error):
            if error is CancellationError {
                return interruption ?? .interrupted
            }
            let cliError = (error as? CLIError) ?? .failure(Self.describe(error))
            report(cliError, command: type(of: command))
            return interruption ?? cliError.exitCode
        }
    }

    /// Prints `Error: <message>` and, for usage errors, the usage of `command` (or of the root).
    private func report(_ error: CLIError, command: (any ParsableCommand.Type)?) {
        var text = "Error: \(Self.oneLine(error.message))\n"
        if error.isUsageError {
            text += HelpFormatter(root: root).errorUsage(for: command)
        }
        context.stderr.write(text)
    }

    /// A one-line description of any error: its `errorDescription` when it has one, else its description.
    static func describe(_ error: any Error) -> String {
        if let localized = error as? any LocalizedError, let text = localized.errorDescription {
            return oneLine(text)
        }
        return oneLine(String(describing: error))
    }

    /// Joins lines so that an error stays one line (and escapes controls that could hide in it).
    static func oneLine(_ text: String) -> String {
        TerminalText.escape(text.split(whereSeparator: \.isNewline).joined(separator: " "))
    }
}
