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
}
