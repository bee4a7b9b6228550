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
