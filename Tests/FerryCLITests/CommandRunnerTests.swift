import Testing

@testable import FerryCLI

/// A command whose run step does what its options say, to exercise the runner's error and exit-code handling.
private struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Exercise the runner.",
        arguments: [
            ArgumentDefinition("target", help: "What to probe."),
            ArgumentDefinition("extra", help: "More words.", isOptional: true, isRepeating: true),
        ],
        options: [.option("do", valueName: "what", help: "What run does.")]
    )

    struct Opaque: Error {}

    var words: [String]
    var outcome: String?
    var global: GlobalOptions

    init(parsing values: ParsedValues) throws {
        words = values.arguments
        outcome = values.last("do")
        global = try GlobalOptions(parsing: values)
    }

    func run(context: CommandContext) async throws -> ExitCode {
        switch outcome {
        case "failure":
            throw CLIError.failure("cannot reach peer 'bob': connection refused; check that it runs ferry")
        case "usage":
            throw CLIError.usage("--to and --all cannot be combined")
        case "cancelled":
            throw CancellationError()
        case "opaque":
            throw Opaque()
        case "three":
            return ExitCode(3)
        default:
            context.stdout.writeLine(words.joined(separator: " "))
            return .success
        }
    }
}

@Suite struct CommandRunnerTests {
    static let root = RootCommand(
        commandName: "ferry",
        version: "9.9",
        abstract: "Test root.",
        subcommands: [ProbeCommand.self]
    )

    static let probeUsage = """
        Usage: ferry probe [--do <what>] <target> [<extra> ...] [<global options>]
          See 'ferry probe --help' for more information.
        """

    func run(_ arguments: [String]) async -> FerryRun {
        await FerryRun.run(arguments, root: Self.root)
    }

    @Test func success() async {
        #expect(await run(["probe", "a", "b", "c"]) == FerryRun(code: .success, stdout: "a b c\n", stderr: ""))
    }

    @Test func runtimeFailureIsOneLineAndExitsOne() async {
        #expect(
            await run(["probe", "x", "--do", "failure"])
                == FerryRun(
                    code: .failure,
                    stdout: "",
                    stderr: "Error: cannot reach peer 'bob': connection refused; check that it runs ferry\n"
                )
        )
        #expect(
            await run(["probe", "x", "--do", "opaque"])
                == FerryRun(code: .failure, stdout: "", stderr: "Error: Opaque()\n")
        )
    }

    @Test func usageErrorFromRunShowsUsage() async {
        #expect(
            await run(["probe", "x", "--do", "usage"])
                == .usageError("Error: --to and --all cannot be combined\n" + Self.probeUsage)
        )
    }

    @Test func cancellationExitsWith130() async {
        #expect(await run(["probe", "x", "--do=cancelled"]) == FerryRun(code: .interrupted, stdout: "", stderr: ""))
    }

    @Test func returnedCodeIsKept() async {
        #expect(await run(["probe", "x", "--do", "three"]) == FerryRun(code: ExitCode(3), stdout: "", stderr: ""))
    }

    @Test func positionalArity() async {
        #expect(await run(["probe"]) == .usageError("Error: Missing expected argument '<target>'\n" + Self.probeUsage))
    }

    @Test func helpWithArguments() async {
        #expect(
            await run(["help", "probe"])
                == .printed(
                    """
                    OVERVIEW: Exercise the runner.

                    USAGE: ferry probe [--do <what>] <target> [<extra> ...] [<global options>]

                    ARGUMENTS:
                      <target>                What to probe.
                      <extra>                 More words.

                    OPTIONS:
                      --do <what>             What run does.
                      -h, --help              Show help information.
                    """ + "\n\n" + HelpSnapshotTests.globalOptionsHelp
                )
        )
        #expect(await run(["--version"]) == .printed("ferry 9.9"))
    }

    @Test func exitCodes() {
        #expect(ExitCode.success.rawValue == 0)
        #expect(ExitCode.failure.rawValue == 1)
        #expect(ExitCode.usage.rawValue == 64)
        #expect(ExitCode.interrupted.rawValue == 130)
        #expect(CLIError.usage("x").exitCode == .usage)
        #expect(CLIError.failure("x").exitCode == .failure)
    }
}
