import Foundation
import Testing

@testable import FerryCLI

/// Pins every usage error of send, receive and watch (exit 64, usage line), and the run-time failures that come
/// before any network activity (exit 1, one line).
@Suite struct TransferUsageErrorTests {
    static let sendUsage = """
        Usage: ferry send [--to <peer> ...] [--all] [--wait <seconds>] [--as <name>]
               [--compress <mode>] [--trusted-only] [--text <text>] [--no-relay]
               [--rehash] [--no-localsend] [--pin-file <file>] [--json] [<file> ...]
               [<global options>]
          See 'ferry send --help' for more information.
        """

    static let receiveUsage = """
        Usage: ferry receive [--into <dir>] [--accept <policy>]
               [--ask-timeout <seconds>] [--once] [--no-relay] [--clear-staged]
               [--no-localsend] [--pin-file <file>] [--ask-pin]
               [--localsend-port <port>] [--json] [<global options>]
          See 'ferry receive --help' for more information.
        """

    static let watchUsage = """
        Usage: ferry watch [--to <peer> ...] [--all] [--compress <mode>]
               [--trusted-only] [--json] <dir> [<global options>]
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
        let missing = "Missing expected argument '<file> ...' (or a message with --text <text>)"
        #expect(await FerryRun.run(["send"]) == Self.send(missing))
        #expect(await FerryRun.run(["send", "--to", "bob"]) == Self.send(missing))
        #expect(
            await FerryRun.run(["send", "--text", "", "--to", "bob"]) == Self.send("--text: the text must not be empty")
        )
        #expect(
            await FerryRun.run(["send", "--text", String(repeating: "é", count: 32_769), "--to", "bob"])
                == Self.send(
                    "--text: the text is 65538 bytes, more than a message can carry (65536 bytes, 64 KiB); send it as a"
                        + " file instead"))
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

    /// `--ask-pin` types the PIN at a terminal: with `--pin-file` too, or with no terminal, a usage error, said
    /// before the directory is created.
    @Test func askPinNeedsATerminalAndExcludesPinFile() async throws {
        #expect(
            await FerryRun.run(["receive", "--ask-pin", "--pin-file", "/nonexistent"])
                == Self.receive("--ask-pin asks for the PIN that --pin-file gives; choose one of them"))
        #expect(
            await FerryRun.run(["receive", "--ask-pin", "--no-localsend"])
                == Self.receive("--no-localsend serves no LocalSend app; --ask-pin is for LocalSend apps"))
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-askpin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let inbox = parent.appendingPathComponent("inbox").path
        #expect(
            await FerryRun.run(["receive", "--ask-pin", "--into", inbox])
                == Self.receive(
                    "--ask-pin asks on a terminal and there is none; give the PIN in a private file with --pin-file"
                        + " FILE"))
        #expect(!FileManager.default.fileExists(atPath: inbox))
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
        for bad in ["0", "-5", "86401"] {
            #expect(
                await FerryRun.run(["receive", "--ask-timeout", bad])
                    == Self.receive(
                        "--ask-timeout: the time must be more than 0 and at most 86400 seconds (got \(bad))"))
        }
        #expect(
            await FerryRun.run(["receive", "--ask-timeout", "soon"])
                == Self.receive("--ask-timeout: 'soon' is not a valid number of seconds"))
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

    /// Issue 9, 6: `send ''` said "Error: : no such file".
    @Test func anEmptyFileNameIsNamedAsSuch() async {
        #expect(
            await FerryRun.run(["send", "", "--to", "bob"])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: an empty file name was given; name a file or directory to send.\n"))
    }

    /// Issue 9, 6: a 5000-character path was reported as missing (ENAMETOOLONG), and echoed whole.
    @Test func aPathTooLongIsSaidToBeTooLongAndShownCut() async {
        let long = String(repeating: "a/", count: 2500)
        let run = await FerryRun.run(["send", long, "--to", "bob"])
        #expect(
            run
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: " + String(repeating: "a/", count: 19) + "..." + String(repeating: "a/", count: 19)
                        + " (5000 characters): the path is too long (5000 bytes; at most 4095); shorten it, or send "
                        + "from a directory nearer the file.\n"))
        let name = "/tmp/" + String(repeating: "n", count: 256) + "/x.jpg"
        let nameRun = await FerryRun.run(["send", name, "--to", "bob"])
        #expect(nameRun.code == .failure)
        #expect(
            nameRun.stderr.hasSuffix(
                " (267 characters): a name in the path is too long (256 bytes; at most 255); check the path.\n"))
        // The longest path the system takes is still looked up (and missing here).
        let longest = "/" + String(repeating: "./", count: 2043) + "missing0"
        #expect(longest.utf8.count == 4095)
        let longestRun = await FerryRun.run(["send", longest, "--to", "bob"])
        #expect(longestRun.stderr.contains("no such file or directory"), "\(longestRun.stderr)")
    }

    /// Issue 9, 6: a 100 000-character `--to` was echoed whole. Whatever was typed is shown cut to about 80
    /// characters, with its length.
    @Test func longInputIsEchoedCut() async {
        let huge = String(repeating: "x", count: 100_000)
        let cut = String(repeating: "x", count: 38) + "..." + String(repeating: "x", count: 38) + " (100000 characters)"
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to", huge, "--to", huge])
                == Self.send("--to: '\(cut)' is given twice"))
        let host = String(repeating: "x", count: 100) + ".local:1"
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to", host])
                == Self.send(
                    "--to: '\(String(repeating: "x", count: 38))...\(String(repeating: "x", count: 30)).local:1 (108 "
                        + "characters)' names a host; ferry does not look up host names. Give the peer's IP address "
                        + "and port (e.g. 192.168.1.20:41971) or its display name"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--all", "--wait", huge])
                == Self.send("--wait: '\(cut)' is not a valid number of seconds"))
        #expect(await FerryRun.run(["receive", huge]) == Self.receive("Unexpected argument '\(cut)'"))
        #expect(
            await FerryRun.run(["receive", "--" + huge]).stderr.hasPrefix(
                "Error: Unknown option '--\(String(repeating: "x", count: 36))..."))
        // The usage is four lines since --no-localsend, --pin-file and --localsend-port (issue 29).
        #expect(await FerryRun.run(["receive", "--peer", huge]).stderr.count < 530)
        // Hostile bytes are still escaped, and a short value is shown whole.
        #expect(
            await FerryRun.run(["send", "a.jpg", "--to", "b\u{1B}", "--to", "b\u{1B}"])
                == Self.send("--to: 'b\\u{1B}' is given twice"))
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

    /// A symbolic link given as the directory is resolved once, to the directory it names; one to nothing is an
    /// error that says so.
    @Test func aReceiveDirectoryGivenAsASymbolicLinkIsTheDirectoryItNames() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let real = directory.path + "/real"
        #expect(mkdir(real, 0o755) == 0)
        #expect(symlink(real, directory.path + "/link") == 0)
        let resolved = URL(fileURLWithPath: real).resolvingSymlinksInPath().path
        #expect(try ReceiveCommand.prepareDirectory(directory.path + "/link") == resolved)
        #expect(symlink(directory.path + "/nowhere", directory.path + "/dangling") == 0)
        let dangling = await FerryRun.run(["receive", "--into", directory.path + "/dangling"])
        #expect(dangling.code == .failure)
        #expect(
            dangling.stderr.hasPrefix(
                "Error: cannot receive into \(directory.path)/dangling: it is a symbolic link to something that does not"
                    + " exist"), "\(dangling.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/nowhere"), "nothing was created for it")
    }

    @Test func watchedDirectoryMustExist() async throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let run = await FerryRun.run(["watch", directory.path + "/missing", "--all"])
        #expect(run.code == .failure)
        #expect(run.stdout == "")
        #expect(
            run.stderr
                == "Error: cannot watch \(directory.path)/missing: no such directory; create it with 'mkdir -p "
                + "\(directory.path)/missing' (ferry does not create it), or name another one\n")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/missing"))
        let spaced = await FerryRun.run(["watch", directory.path + "/my inbox", "--all"])
        #expect(spaced.stderr.contains("create it with 'mkdir -p '\(directory.path)/my inbox''"), "\(spaced.stderr)")
        let file = try directory.file("plain", contents: "x")
        let notDirectory = await FerryRun.run(["watch", file, "--all"])
        #expect(
            notDirectory
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: cannot watch \(file): it is not a directory; name a directory\n"))
    }

    @Test func receiveCreatesTheDirectoryButNotItsParents() throws {
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let new = directory.path + "/new"
        #expect(try ReceiveCommand.prepareDirectory(new, createParents: false) == new)
        #expect(FileManager.default.fileExists(atPath: new))
        let deep = directory.path + "/a/b"
        #expect(
            throws: CLIError.failure(
                "cannot receive into \(deep): \(directory.path)/a does not exist; create it first, or choose another "
                    + "directory with --into")
        ) {
            try ReceiveCommand.prepareDirectory(deep, createParents: false)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/a"))
        #expect(
            ReceiveCommand.configuration.options.first { $0.name == "into" }?.help
                == "Put received files in this directory (created if missing, but not its parents).")
    }

    @Test func standardInputUsageErrors() async throws {
        #expect(
            await FerryRun.run(["send", "-", "-", "--all"])
                == Self.send("'-' (standard input) is given 2 times; it can be sent once"))
        // Issue 28, 5: --as renames the one FILE sent; it cannot name several.
        #expect(
            await FerryRun.run(["send", "a.jpg", "b.jpg", "--as", "x", "--all"])
                == Self.send(
                    "--as renames the one FILE sent (or standard input, -); 2 files are given: send them one by one to"
                        + " rename each, or without --as"))
        #expect(
            await FerryRun.run(["send", "a.jpg", "--as", "../x", "--all"])
                == Self.send("--as: '../x' cannot be sent as a name: the name refers to a parent directory (\"..\")"))
        #expect(
            await FerryRun.run(["send", "-", "--as", "../x", "--all"])
                == Self.send("--as: '../x' cannot be sent as a name: the name refers to a parent directory (\"..\")"))
        #expect(
            await FerryRun.run(["send", "-", "--as", "", "--all"])
                == Self.send("--as: '' cannot be sent as a name: the name is empty"))
        // A clash with a file's name is found before standard input is read.
        let directory = try TemporaryFiles()
        defer { directory.remove() }
        let file = try directory.file("stdin", contents: "x")
        #expect(
            await FerryRun.run(["send", "-", file, "--all"])
                == Self.send(
                    "standard input would be sent as 'stdin', which is also the name of \(file); choose another "
                        + "name with --as"))
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
