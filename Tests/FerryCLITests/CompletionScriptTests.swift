import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

/// `ferry completions SHELL`: scripts generated from the command definitions, checked by bash itself.
@Suite struct CompletionScriptTests {
    static let subcommandNames = FerryCommand.root.subcommands.map { $0.configuration.commandName }

    @Test(arguments: CompletionScript.Shell.allCases)
    func scriptNamesEverySubcommandAndEveryOptionOfSend(shell: CompletionScript.Shell) async {
        let run = await FerryRun.run(["completions", shell.rawValue])
        #expect(run.code == .success)
        #expect(run.stderr == "")
        for name in Self.subcommandNames + TrustCommand.configuration.subcommands.map { $0.configuration.commandName } {
            #expect(run.stdout.contains(name), "\(shell) script lacks subcommand \(name)")
        }
        let sendOptions = SendCommand.configuration.options + GlobalOptions.definitions
        for option in sendOptions {
            let spelling = shell == .fish ? "-l \(option.name)" : option.longSpelling
            #expect(run.stdout.contains(spelling), "\(shell) script lacks \(option.longSpelling)")
        }
        for value in ["auto", "zlib", "zstd", "none"] {
            #expect(run.stdout.contains(value))
        }
    }

    @Test func unknownShellIsAUsageError() async {
        let run = await FerryRun.run(["completions", "tcsh"])
        #expect(run.code == .usage)
        #expect(run.stdout == "")
        #expect(run.stderr.hasPrefix("Error: Unknown shell 'tcsh'; choose one of: bash, zsh, fish\n"))
        let missing = await FerryRun.run(["completions"])
        #expect(missing.code == .usage)
    }

    @Test func bashAcceptsTheBashScript() throws {
        let script = CompletionScript(root: FerryCommand.root).script(for: .bash)
        let result = try Self.bash(["-n"], script: script, then: "")
        #expect(result.status == 0, "bash -n: \(result.output)")
    }

    @Test func bashCompletesSubcommandsOptionsAndValues() throws {
        #expect(try Self.complete(["ferry", "se"]) == ["send"])
        #expect(try Self.complete(["ferry", "send", "--comp"]) == ["--compress"])
        #expect(try Self.complete(["ferry", "send", "--compress", ""]) == ["auto", "zlib", "zstd", "none"])
        #expect(try Self.complete(["ferry", "receive", "--accept", "t"]) == ["trusted"])
        #expect(try Self.complete(["ferry", "chat", "--accept", "t"]) == ["trusted"])
        #expect(try Self.complete(["ferry", "send", "--a"]) == ["--all", "--as"])
        #expect(try Self.complete(["ferry", "receive", "--cl"]) == ["--clear-staged"])
        #expect(try Self.complete(["ferry", "trust", "r"]) == ["remove"])
        #expect(try Self.complete(["ferry", "trust", "add", "--wa"]) == ["--wait"])
        #expect(try Self.complete(["ferry", "--session", "x", "chat", "--mode", "se"]) == ["server"])
        #expect(try Self.complete(["ferry", "help", "wa"]) == ["watch"])
        #expect(try Self.complete(["ferry", "comp"]) == ["completions"])
        #expect(try Self.complete(["ferry", "ha"]) == ["hash"])
        #expect(try Self.complete(["ferry", "hash", "--chu"]) == ["--chunk-size"])
    }

    /// `ferry completions <Tab>` offers the shells it has a script for, in each shell's script.
    @Test func theCompletionsCommandCompletesItsShell() throws {
        #expect(try Self.complete(["ferry", "completions", ""]) == ["bash", "zsh", "fish"])
        #expect(try Self.complete(["ferry", "completions", "z"]) == ["zsh"])
        #expect(try Self.complete(["ferry", "-v", "completions", "f"]) == ["fish"])
        let completions = CompletionScript(root: FerryCommand.root)
        let zsh = completions.script(for: .zsh)
        let arm = try #require(zsh.range(of: "\"ferry completions\")"), "zsh: no arm for ferry completions")
        let nextArm = try #require(zsh[arm.upperBound...].range(of: "\n            fi\n")).lowerBound
        #expect(
            zsh[arm.upperBound..<nextArm].contains("compadd -- 'bash' 'zsh' 'fish'"),
            "zsh: \(zsh[arm.upperBound..<nextArm])")
        let fish = completions.script(for: .fish)
        #expect(fish.contains("complete -c ferry -n '__ferry_at \"ferry completions\"' -x -a 'bash zsh fish'"))
    }

    /// What the bash script offers for `words`, the last being the word under the cursor.
    static func complete(_ words: [String]) throws -> [String] {
        let script = CompletionScript(root: FerryCommand.root).script(for: .bash)
        let array = words.map { CompletionScript.singleQuoted($0) }.joined(separator: " ")
        let call = """
            COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _ferry; printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try bash([], script: script, then: call)
        #expect(result.status == 0, "bash: \(result.output)")
        return result.output.split(separator: "\n").map(String.init)
    }

    /// Runs bash on `script` followed by `then`, in a temporary directory that is removed afterwards.
    static func bash(_ options: [String], script: String, then: String) throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-completion-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("script.bash")
        try (script + "\n" + then + "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["--norc", "--noprofile"] + options + [file.path]
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.runFenced()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
