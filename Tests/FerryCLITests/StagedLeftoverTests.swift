import Foundation
import Testing

@testable import FerryCLI

/// Issue 13, staged leftovers: `ferry receive --clear-staged` removes the partial files kept for resuming and says
/// what it removed; a receiver starting on the directory removes those untouched for 7 days (file times set in
/// the past stand in for the wait).
@Suite struct StagedLeftoverTests {
    static let keyA = String(repeating: "a", count: 64)
    static let keyB = String(repeating: "b", count: 64)

    /// `DIR/.ferry-staging` with a staged file per key (`bytes` each, modified `age` ago) and a file that is no key.
    static func stage(_ directory: TemporaryFiles, _ files: [(key: String, bytes: Int, age: TimeInterval)]) throws
        -> String
    {
        let staging = directory.path + "/.ferry-staging"
        try FileManager.default.createDirectory(
            atPath: staging, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for file in files {
            let path = staging + "/" + file.key
            try Data(repeating: 7, count: file.bytes).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -file.age)], ofItemAtPath: path)
        }
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: staging + "/notes"))
        return staging
    }

    static func names(_ staging: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: staging).sorted()
    }

    @Test func clearStagedRemovesEveryStagedFileAndSaysHowManyAndHowLarge() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let staging = try Self.stage(directory, [(Self.keyA, 1_572_864, 60), (Self.keyB, 500, 0)])
        let run = await FerryRun.run(["receive", "--clear-staged", "--into", directory.path])
        #expect(
            run == FerryRun(code: .success, stdout: "removed 2 staged files (1.5 MiB) from \(staging)\n", stderr: ""))
        #expect(try Self.names(staging) == ["notes"])
        let again = await FerryRun.run(["receive", "--clear-staged", "--into", directory.path, "--json"])
        #expect(again.code == .success && again.stderr == "")
        #expect(
            again.stdout
                == #"{"event":"stagedRemoved","directory":"\#(staging)","files":0,"bytes":0,"inUse":0,"#
                + #""reason":"cleared"}"# + "\n")
    }

    @Test func clearStagedCreatesNothing() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let missing = directory.path + "/missing"
        let run = await FerryRun.run(["receive", "--clear-staged", "--into", missing])
        #expect(run.code == .success)
        #expect(run.stdout == "nothing staged to remove in \(missing)/.ferry-staging\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
        let plain = await FerryRun.run(["receive", "--clear-staged", "--into", directory.path])
        #expect(plain.stdout == "nothing staged to remove in \(directory.path)/.ferry-staging\n")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/.ferry-staging"))
    }

    @Test func clearStagedTakesNoReceivingOptions() async {
        for extra in [["--once"], ["--accept", "all"], ["--ask-timeout", "5"], ["--no-relay"]] {
            let run = await FerryRun.run(["receive", "--clear-staged"] + extra)
            #expect(run.code == .usage)
            #expect(
                run.stderr.hasPrefix(
                    "Error: --clear-staged removes staged files and exits; it takes --into and --json, not "
                        + extra[0] + "\n"), "\(run.stderr)")
        }
    }

    @Test func aStartingReceiverRemovesWhatIsUntouchedForSevenDays() throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let day: TimeInterval = 24 * 3600
        let staging = try Self.stage(directory, [(Self.keyA, 2048, 7 * day + 600), (Self.keyB, 10, 7 * day - 600)])
        let err = CapturingTextSink()
        let context = CommandContext(stdout: CapturingTextSink(), stderr: err)
        ReceiveCommand(into: directory.path).expireStaged(in: directory.path, context: context)
        #expect(try Self.names(staging) == [Self.keyB, "notes"])
        #expect(
            err.text
                == "removed 1 staged file (2.0 KiB) from \(staging) (partial files of transfers untouched for 7 days)\n"
        )
        // Nothing old left: nothing said.
        let quiet = CapturingTextSink()
        ReceiveCommand(into: directory.path).expireStaged(
            in: directory.path, context: CommandContext(stdout: CapturingTextSink(), stderr: quiet))
        #expect(quiet.text == "")
        #expect(ReceiveCommand.stagedExpiry == .seconds(7 * 24 * 3600))
    }
}
