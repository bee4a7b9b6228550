import Foundation
import Testing

@testable import FerryCLI

/// Pins every usage error of send, receive and watch (exit 64, usage line), and the run-time failures that come
/// before any network activity (exit 1, one line).
@Suite struct TransferUsageErrorTests {
    static let sendUsage = """
        Usage: ferry send [--to <peer> ...] [--all] [--wait <seconds>]
               [--compress <mode>] [--trusted-only] [--json] <file> ...
               [<global options>]
          See 'ferry send --help' for more information.
        """

    static let receiveUsage = """
        Usage: ferry receive [--into <dir>] [--accept <policy>] [--once] [--json]
               [<global options>]
          See 'ferry receive --help' for more information.
        """

    static let watchUsage = """
        Usage: ferry watch [--to <peer> ...] [--all] [--compress <mode>] [--json] <dir>
               [<global options>]
          See 'ferry watch --help' for more information.
        """

    static func send(_ message: String) -> FerryRun {
        .usageError("Error: \(message)\n" + sendUsage)
    }

    static func receive(_ message: String) -> FerryRun {
        .usageError("Error: \(message)\n" + receiveUsage)
    }

    static func watch(_ message: String) -> FerryRun {
        .usageError("Error: \(message)\n" + watchUsage)
    }

    @Test func sendUsageErrors() async {
        #expect(await FerryRun.run(["send"]) == Self.send("Missing expected argument '<file> ...'"))
        #expect(await FerryRun.run(["send", "--to", "bob"]) == Self.send("Missing expected argument '<file> ...'"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to", "bob", "--all"])
                == Self.send(
                    "--to and --all cannot be combined; name peers with --to, or send to every peer with --all"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to", "bob", "--to=bob"])
                == Self.send("--to: 'bob' is given twice"))
        #expect(await FerryRun.run(["send", "a.jpg", "--to"]) == Self.send("Missing value for '--to <peer>'"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to="]) == Self.send("--to: the peer name must not be empty"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to", "laptop.local:41971"])
                == Self.send(
                    "--to: 'laptop.local:41971' names a host; ferry does not look up host names. Give the peer's "
                        + "IP address and port (e.g. 192.168.1.20:41971) or its display name"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all", "--wait", "-1"])
                == Self.send("--wait: the wait must be 0 to 86400 seconds (got -1)"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all", "--wait", "86401"])
                == Self.send("--wait: the wait must be 0 to 86400 seconds (got 86401)"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all", "--wait", "soon"])
                == Self.send("--wait: 'soon' is not a valid number of seconds"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all", "--compress", "gzip"])
                == Self.send("--compress: 'gzip' is not a valid compression mode (auto, zlib, zstd, none)"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all", "--tO", "x"])
                == Self.send("Unknown option '--tO'. Did you mean '--to'?"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all=yes"]) == Self.send("Option '--all' does not take a value"))
    }

    @Test func sendWithoutTargetNeedsATerminal() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let file = try directory.file("a.txt", contents: "hello")
        #expect(
            await FerryRun.run(["send", file])
                == Self.send(
                    "no peer given: name peers with --to PEER, or send to every peer with --all (without them a "
                        + "picker is shown, which needs a terminal)"))
    }

    @Test func receiveUsageErrors() async {
        #expect(
            await FerryRun.run(["receive", "--accept", "maybe"])
                == Self.receive("--accept: 'maybe' is not a valid policy (ask, all, trusted)"))
        #expect(await FerryRun.run(["receive", "--into="]) == Self.receive("--into: the directory must not be empty"))
        #expect(await FerryRun.run(["receive", "--into"]) == Self.receive("Missing value for '--into <dir>'"))
        #expect(await FerryRun.run(["receive", "Inbox"]) == Self.receive("Unexpected argument 'Inbox'"))
        #expect(
            await FerryRun.run(["receive", "--once=yes"]) == Self.receive("Option '--once' does not take a value"))
        #expect(
            await FerryRun.run(["receive", "--onse"]) == Self.receive("Unknown option '--onse'. Did you mean '--once'?")
        )
    }

    @Test func watchUsageErrors() async {
        #expect(await FerryRun.run(["watch", "--all"]) == Self.watch("Missing expected argument '<dir>'"))
        #expect(
            await FerryRun.run(["watch", "Outbox"])
                == Self.watch("no peer given: name peers with --to PEER, or send to every peer with --all"))
        #expect(
            await FerryRun.run(["watch", "Outbox", "--all", "--to", "bob"])
                == Self.watch(
                    "--to and --all cannot be combined; name peers with --to, or send to every peer with --all"))
        #expect(
            await FerryRun.run(["watch", "Outbox", "Other", "--all"]) == Self.watch("Unexpected argument 'Other'"))
        #expect(
            await FerryRun.run(["watch", "Outbox", "--all", "--compress", "fast"])
                == Self.watch("--compress: 'fast' is not a valid compression mode (auto, zlib, zstd, none)"))
        #expect(await FerryRun.run(["watch", "", "--all"]) == Self.watch("<dir>: the directory must not be empty"))
        #expect(
            await FerryRun.run(["watch", "Outbox", "--to", "pc.lan:1"])
                == Self.watch(
                    "--to: 'pc.lan:1' names a host; ferry does not look up host names. Give the peer's IP address "
                        + "and port (e.g. 192.168.1.20:41971) or its display name"))
    }

    @Test func missingFileFailsBeforeAnyNetworkActivity() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let missing = directory.path + "/no-such.jpg"
        let run = await FerryRun.run(["send", missing, "--to", "bob"])
        #expect(
            run
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: \(missing): no such file or directory; check the path.\n"))
    }

    @Test func receiveDirectoryThatCannotBeUsed() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let file = try directory.file("plain", contents: "x")
        let notDirectory = await FerryRun.run(["receive", "--into", file])
        #expect(
            notDirectory
                == FerryRun(
                    code: .failure, stdout: "", stderr: "Error: cannot receive into \(file): it is not a directory\n"))
        let below = await FerryRun.run(["receive", "--into", file + "/inbox"])
        #expect(below.code == .failure)
        #expect(below.stderr.hasPrefix("Error: cannot create the directory \(file)/inbox to receive into: "))
        #expect(below.stderr.hasSuffix("; choose another with --into\n"))
        #expect(below.stderr.split(separator: "\n").count == 1)
    }

    @Test func watchedDirectoryMustExist() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let run = await FerryRun.run(["watch", directory.path + "/missing", "--all"])
        #expect(run.code == .failure)
        #expect(run.stdout == "")
        #expect(run.stderr.hasPrefix("Error: cannot watch \(directory.path)/missing: "))
        #expect(run.stderr.split(separator: "\n").count == 1)
    }
}

/// A temporary directory for one test; `defer { directory.remove() }` right after creating it.
struct TemporaryFiles {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Creates `name` with `contents` and returns its path.
    func file(_ name: String, contents: String) throws -> String {
        let file = path + "/" + name
        try Data(contents.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}
