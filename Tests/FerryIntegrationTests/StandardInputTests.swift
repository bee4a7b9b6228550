import Foundation
import FerryTestSupport
import Testing

/// Issue 13, `ferry send -`: standard input is read to its end into a temporary file that has no name, and sent
/// under the name `--as` gives (or `stdin`), with --to, --all and the picker; from a pipe, a terminal, or empty.
extension IntegrationTests {
    @Suite(.serialized) struct StandardInputTests {
        /// Entries of `directory` (the sender's `$TMPDIR`).
        static func entries(_ directory: TemporaryDirectory) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path)
        }

        /// `ferry send --json - ARGS` with `$TMPDIR` set to `temporary`, started; its stdin is a pipe.
        static func sender(
            _ harness: TransferHarness, _ arguments: [String], temporary: TemporaryDirectory
        ) throws -> FerryProcess {
            try harness.chat.registry.startFerry(
                ["send", "--json"] + arguments + [
                    "--session", harness.session, "--name", "outbox", "--interface", "lo",
                ],
                environment: harness.chat.environment("outbox").merging(["TMPDIR": temporary.path]) { $1 })
        }

        @Test func aPipeIsSentUnderTheNameGivenAndLeavesNothingBehind() async throws {
            let harness = try TransferHarness()
            let temporary = try TemporaryDirectory(prefix: "ferry-tmpdir")
            defer { temporary.remove() }
            let other = try harness.files.random("beside.bin", size: 5000, seed: 3)
            let (receiver, port) = try harness.receiver()
            let bytes = TestFiles.randomBytes(count: 300_000, seed: 9)
            let sender = try Self.sender(
                harness, ["-", other.path, "--as", "notes.bin", "--to", "127.0.0.1:\(port)"], temporary: temporary)
            try sender.writeToStdin(bytes)
            sender.closeStdin()
            let (status, lines, errors) = try await sender.finish()
            #expect(status == 0, "\(lines) \(errors)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(
                try TransferHarness.visibleFiles(in: harness.inbox.path) == ["notes.bin": 300_000, "beside.bin": 5000])
            let received = try Data(contentsOf: URL(fileURLWithPath: harness.inbox.path + "/notes.bin"))
            #expect(Array(received) == bytes)
            #expect(!errors.contains("choose the name with --as"), "\(errors)")
            #expect(try Self.entries(temporary) == [])
        }

        @Test func withoutAsTheNameIsStdinAndALargeInputIsAnnounced() async throws {
            let harness = try TransferHarness()
            let temporary = try TemporaryDirectory(prefix: "ferry-tmpdir")
            defer { temporary.remove() }
            let (receiver, _) = try harness.receiver()
            let sender = try Self.sender(harness, ["-", "--all", "--wait", "60"], temporary: temporary)
            // More than 16 MiB: ferry says it is reading, and while it does its copy has no name in TMPDIR.
            let bytes = TestFiles.randomBytes(count: 17 << 20, seed: 4)
            try sender.writeToStdin(bytes)
            let line = try sender.waitForErrorLine(timeout: .seconds(120)) { $0.contains("reading standard input") }
            #expect(line.contains("into a temporary file in \(temporary.path) before sending it"), "\(line)")
            #expect(try Self.entries(temporary) == [])
            sender.closeStdin()
            let (status, lines, errors) = try await sender.finish()
            #expect(status == 0, "\(lines) \(errors)")
            #expect(errors.contains("sending standard input as 'stdin' (choose the name with --as NAME)"), "\(errors)")
            #expect(errors.contains("read 17.0 MiB from standard input"), "\(errors)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["stdin": 17 << 20])
            let received = try Data(contentsOf: URL(fileURLWithPath: harness.inbox.path + "/stdin"))
            #expect(Array(received) == bytes)
        }

        @Test func anEmptyInputSendsAnEmptyFileAndSaysSo() async throws {
            let harness = try TransferHarness()
            let temporary = try TemporaryDirectory(prefix: "ferry-tmpdir")
            defer { temporary.remove() }
            let (receiver, port) = try harness.receiver()
            let sender = try Self.sender(
                harness, ["-", "--as", "empty.txt", "--to", "127.0.0.1:\(port)"], temporary: temporary)
            sender.closeStdin()
            let (status, lines, errors) = try await sender.finish()
            #expect(status == 0, "\(lines) \(errors)")
            #expect(errors.contains("standard input was empty: sending an empty file 'empty.txt'"), "\(errors)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["empty.txt": 0])
        }

        @Test func ctrlCWhileReadingExits130AndLeavesNothing() async throws {
            let harness = try TransferHarness()
            let temporary = try TemporaryDirectory(prefix: "ferry-tmpdir")
            defer { temporary.remove() }
            let sender = try Self.sender(harness, ["-", "--all"], temporary: temporary)
            try sender.writeToStdin(TestFiles.randomBytes(count: (16 << 20) + 1, seed: 5))
            _ = try sender.waitForErrorLine(timeout: .seconds(120)) { $0.contains("reading standard input") }
            // The input stays open: ferry is still reading when the signal comes.
            sender.signal(SIGINT)
            let status = try sender.waitForExit(timeout: .seconds(60))
            #expect(status == 130, "\(sender.capturedOutput())")
            #expect(try Self.entries(temporary) == [])
        }

        @Test func fromATerminalItSaysHowToEndAndThePickerStillAsks() async throws {
            let harness = try TransferHarness()
            let (receiver, _) = try harness.receiver("typed-inbox")
            let pane = try TerminalPane(
                [
                    "send", "-", "--as", "typed.txt", "--session", harness.session, "--name", "outbox", "--interface",
                    "lo",
                ],
                environment: harness.chat.environment("outbox"), name: "typed")
            defer { pane.close() }
            try pane.waitFor("reading from the terminal; end with Ctrl-D")
            try pane.type("hello from a terminal")
            try pane.press("C-d")
            try pane.waitFor("typed-inbox")
            try pane.type("typed")
            try pane.waitFor("Does typed-inbox show")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let text = try String(contentsOfFile: harness.inbox.path + "/typed.txt", encoding: .utf8)
            #expect(text == "hello from a terminal\n")
        }

        @Test func redirectedInputStillGetsThePickerOnTheTerminal() async throws {
            let harness = try TransferHarness()
            let input = try harness.files.random("input.bin", size: 70_000, seed: 6)
            let (receiver, _) = try harness.receiver("picked-inbox")
            let pane = try TerminalPane(
                [
                    "send", "-", "--as", "piped.bin", "--session", harness.session, "--name", "outbox", "--interface",
                    "lo",
                ],
                environment: harness.chat.environment("outbox"), name: "piped", stdinFile: input.path)
            defer { pane.close() }
            try pane.waitFor("picked-inbox")
            #expect(!(try pane.text()).contains("reading from the terminal"))
            try pane.type("1")
            try pane.waitFor("Does picked-inbox show")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.sha256(harness.inbox.path + "/piped.bin") == TransferHarness.sha256(input.path))
        }
    }
}
