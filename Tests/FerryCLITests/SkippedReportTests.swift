import FerryTransfer
import Testing

@testable import FerryCLI

/// Issue 13: what `send` says about the entries of a folder it skipped (symbolic links, special files).
@Suite struct SkippedReportTests {
    static let skipped = [
        SourceFile.Skipped(name: "album/a\u{1B}b", kind: .symbolicLink),
        SourceFile.Skipped(name: "album/link", kind: .symbolicLink),
        SourceFile.Skipped(name: "album/pipe", kind: .special),
    ]

    static func report(json: Bool = false, verbose: Int = 0, _ skipped: [SourceFile.Skipped] = skipped) -> (
        stdout: String, stderr: String
    ) {
        let out = CapturingTextSink()
        let err = CapturingTextSink()
        let command = SendCommand(files: ["album"], all: true, json: json, global: GlobalOptions(verbose: verbose))
        command.reportSkipped(skipped, context: CommandContext(stdout: out, stderr: err))
        return (out.text, err.text)
    }

    @Test func aCountAndEachOneWithVerbose() {
        #expect(
            Self.report()
                == (
                    "",
                    "skipped 2 symbolic links and 1 special file in the folders sent (only regular files are sent); "
                        + "-v lists them\n"
                ))
        #expect(
            Self.report(verbose: 1).stderr
                == """
                skipped 2 symbolic links and 1 special file in the folders sent (only regular files are sent):
                  skipped album/a\\u{1B}b: a symbolic link
                  skipped album/link: a symbolic link
                  skipped album/pipe: not a regular file

                """)
        #expect(
            Self.report([Self.skipped[1]]).stderr
                == "skipped 1 symbolic link in the folders sent (only regular files are sent); -v lists them\n")
        #expect(Self.report([]) == ("", ""))
    }

    /// A name that is not UTF-8 cannot be offered: it is counted, and the line says what to do.
    @Test func aNameThatIsNotUTF8SaysToRenameIt() {
        let all = Self.skipped + [SourceFile.Skipped(name: "album/caf\u{FFFD}.jpg", kind: .undecodableName)]
        #expect(
            Self.report(verbose: 1, all).stderr
                == """
                skipped 2 symbolic links, 1 special file and 1 name that is not UTF-8 in the folders sent (only regular \
                files with UTF-8 names are sent; rename the others to send them):
                  skipped album/a\\u{1B}b: a symbolic link
                  skipped album/link: a symbolic link
                  skipped album/pipe: not a regular file
                  skipped album/caf\u{FFFD}.jpg: its name is not UTF-8 (shown with \u{FFFD} for the bytes that are not)

                """)
        #expect(
            Self.report(json: true, [all[3]]).stdout
                == #"{"event":"skipped","name":"album/caf\#u{FFFD}.jpg","kind":"undecodableName"}"# + "\n")
    }

    @Test func aJSONLineEach() {
        #expect(
            Self.report(json: true)
                == (
                    #"""
                    {"event":"skipped","name":"album/a\u001bb","kind":"symbolicLink"}
                    {"event":"skipped","name":"album/link","kind":"symbolicLink"}
                    {"event":"skipped","name":"album/pipe","kind":"special"}

                    """#, ""
                ))
    }
}
