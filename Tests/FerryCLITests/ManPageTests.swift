import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

/// The committed manual page is the generated one, and it covers every command and option.
@Suite struct ManPageTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let committedPage = packageRoot.appendingPathComponent("docs/ferry.1")

    @Test func committedPageIsUpToDate() async throws {
        let run = await FerryRun.run(["help", "--man"])
        #expect(run.code == .success)
        #expect(run.stderr == "")
        let committed = try String(contentsOf: Self.committedPage, encoding: .utf8)
        #expect(
            committed == run.stdout,
            "docs/ferry.1 is stale; regenerate it with: swift run ferry help --man > docs/ferry.1")
    }

    @Test func pageHasEveryCommandAndOption() {
        let page = ManPageFormatter(root: FerryCommand.root).page()
        for section in [
            ".TH FERRY 1", ".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH EXIT STATUS",
            ".SH EXAMPLES",
        ] {
            #expect(page.contains("\n" + section), "missing \(section)")
        }
        func visit(_ commands: [any ParsableCommand.Type], path: String) {
            for command in commands {
                let configuration = command.configuration
                let words = path + " " + configuration.commandName
                #expect(page.contains(".SS \"\(ManPageFormatter.escape(words))\""), "missing \(words)")
                for option in configuration.options {
                    #expect(
                        page.contains(ManPageFormatter.escape(option.longSpelling) + "\\fR"), "missing \(option.name)")
                }
                visit(configuration.subcommands, path: words)
            }
        }
        visit(FerryCommand.root.subcommands, path: "ferry")
        for option in GlobalOptions.definitions {
            #expect(page.contains(ManPageFormatter.escape(option.longSpelling) + "\\fR"), "missing \(option.name)")
        }
    }

    @Test func textIsEscapedForRoff() {
        #expect(ManPageFormatter.escape("a\\b") == "a\\eb")
        #expect(ManPageFormatter.escape(".TH x") == "\\&.TH x")
        #expect(ManPageFormatter.escape("'quoted") == "\\&'quoted")
        #expect(ManPageFormatter.escape("--to") == "\\-\\-to")
        #expect(
            ManPageFormatter.paragraphs("one\n\n  kept\n.two") == [
                ".PP", "one", ".PP", ".nf", "  kept", ".fi", "\\&.two",
            ])
    }

    @Test func everyTextLineOfThePageIsSafe() {
        let page = ManPageFormatter(root: FerryCommand.root).page()
        for line in page.split(separator: "\n") where !line.hasPrefix(".") {
            #expect(!line.hasPrefix("'"), "a text line starts with a quote: \(line)")
        }
        #expect(!page.contains("\\\\"))
    }

    /// The page as a person reads it with `man` on an 80-column terminal: troff warns about nothing (a word too
    /// long to fit made it print `cannot adjust line`), and it has an EXAMPLES section with commands to copy.
    @Test func manShowsThePageAt80ColumnsWithoutWarningsAndWithExamples() async throws {
        guard let man = ExecutableSearch.path(of: "man") else {
            try Test.cancel("man is missing (CI installs man-db): it renders the page as a person sees it")
        }
        let run = await FerryRun.run(["help", "--man"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-man-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = directory.appendingPathComponent("ferry.1")
        try run.stdout.write(to: page, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: man)
        // --warnings: every troff warning, whatever man-db's default set is.
        process.arguments = ["--warnings", "-l", page.path]
        process.environment = [
            "MANWIDTH": "80", "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin", "MANPAGER": "cat", "PAGER": "cat",
            "HOME": directory.path,
        ]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.runFenced()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let warnings = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "man: \(warnings)")
        #expect(warnings == "", "man at 80 columns warned:\n\(warnings)")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.contains("EXAMPLES"), "no EXAMPLES section")
        #expect(text.contains("ferry send photo.jpg album/ --to alice"), "the examples lack a send")
    }

    /// Each command of the EXAMPLES section is a command line ferry takes (the part from `ferry` to a redirection).
    @Test func everyExampleIsACommandLineFerryTakes() throws {
        for example in ManPageFormatter.examples {
            for command in example.commands {
                let words = command.split(separator: " ").map(String.init)
                let start = try #require(words.firstIndex(of: "ferry"), "\(command)")
                let end = words[start...].firstIndex(of: ">") ?? words.endIndex
                let arguments = Array(words[(start + 1)..<end])
                #expect(throws: Never.self, "\(command)") { _ = try parseCommand(arguments) }
            }
        }
    }
}
