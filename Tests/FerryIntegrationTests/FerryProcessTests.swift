import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    @Suite("FerryProcess")
    struct FerryProcessTests {
        @Test func echoesLinesThroughCat() throws {
            let cat = try FerryProcess(executable: "/bin/cat")
            try cat.send(line: "hello")
            #expect(try cat.nextLine() == "hello")
            try cat.send(line: "world")
            cat.closeStdin()
            #expect(try cat.nextLine() == "world")
            #expect(try cat.waitForExit() == 0)
            #expect(throws: TestSupportError.self) { try cat.nextLine(timeout: .seconds(30)) }
        }

        @Test func capturesStderrAndExitStatus() throws {
            let shell = try FerryProcess(executable: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
            #expect(try shell.nextLine() == "out")
            #expect(try shell.nextErrorLine() == "err")
            #expect(try shell.waitForExit() == 3)
            #expect(shell.allStderrLines == ["err"])
        }

        @Test func killReportsSignalStatusAndLeavesNoChild() throws {
            let cat = try FerryProcess(executable: "/bin/cat")
            let pid = cat.pid
            cat.kill()
            #expect(try cat.waitForExit() == 128 + SIGKILL)
            #expect(!cat.isRunning)
            errno = 0
            #expect(kill(pid, 0) == -1 && errno == ESRCH)
            cat.kill()  // after reaping: a no-op, never a signal to a reused PID
        }

        @Test func terminateSendsSigterm() throws {
            let cat = try FerryProcess(executable: "/bin/cat")
            #expect(try cat.terminate() == 128 + SIGTERM)
        }

        @Test func timeoutErrorShowsCapturedOutput() throws {
            let shell = try FerryProcess(executable: "/bin/sh", arguments: ["-c", "echo first; echo oops >&2; exec cat"])
            defer { shell.kill() }
            #expect(try shell.nextLine() == "first")
            _ = try shell.waitForErrorLine { $0 == "oops" }
            let error = #expect(throws: TestSupportError.self) { try shell.nextLine(timeout: .milliseconds(200)) }
            let message = error.map { "\($0)" } ?? ""
            #expect(message.contains("timed out"))
            #expect(message.contains("first"))
            #expect(message.contains("oops"))
        }

        @Test func endOfOutputErrorShowsExitStatus() throws {
            let shell = try FerryProcess(executable: "/bin/sh", arguments: ["-c", "echo last; exit 7"])
            #expect(try shell.nextLine() == "last")
            let error = #expect(throws: TestSupportError.self) { try shell.nextLine() }
            let message = error.map { "\($0)" } ?? ""
            #expect(message.contains("output ended"))
            #expect(message.contains("exit status 7"))
        }

        @Test func waitForLineSkipsButKeepsLines() throws {
            let shell = try FerryProcess(executable: "/bin/sh", arguments: ["-c", "printf 'a\\nb\\nc\\nd'"])
            #expect(try shell.waitForLine { $0 == "c" } == "c")
            #expect(try shell.nextLine() == "d")  // an unterminated last line still counts
            #expect(shell.allStdoutLines == ["a", "b", "c", "d"])
            #expect(try shell.waitForExit() == 0)
        }

        @Test func nextJSONSkipsOtherLines() throws {
            let script = #"echo 'not json'; echo '[1]'; echo '{"event":"x","n":1}'; echo '{"event":"y","n":2}'"#
            let shell = try FerryProcess(executable: "/bin/sh", arguments: ["-c", script])
            let object = try shell.nextJSON { $0["event"] as? String == "y" }
            #expect(object["n"] as? Int == 2)
        }

        @Test func passesEnvironmentAndDirectory() async throws {
            try await TemporaryDirectory.with { directory in
                let shell = try FerryProcess(
                    executable: "sh", arguments: ["-c", "echo \"$FERRY_TEST_VALUE\"; pwd -P"],
                    environment: ["FERRY_TEST_VALUE": "42"], currentDirectory: directory.url)
                #expect(try shell.nextLine() == "42")
                let expected = directory.url.resolvingSymlinksInPath().path
                #expect(try shell.nextLine() == expected)
                #expect(try shell.waitForExit() == 0)
            }
        }

        @Test func childInheritsOnlyItsStdio() throws {
            // ls opens /proc/self/fd itself (fd 3); anything above would be a descriptor leaked by us.
            let result = try FerryProcess.run("/bin/ls", ["/proc/self/fd"])
            try result.requireSuccess()
            let descriptors = result.stdout.split(separator: "\n").compactMap { Int($0) }
            #expect(descriptors.allSatisfy { $0 <= 3 }, "leaked descriptors: \(descriptors)")
        }

        @Test func spawnFailureIsAnError() {
            let error = #expect(throws: TestSupportError.self) {
                try FerryProcess(executable: "/nonexistent/ferry-test-binary")
            }
            #expect("\(error.map { "\($0)" } ?? "")".contains("could not start"))
        }

        @Test func deinitKillsAndReapsTheChild() throws {
            var pid: Int32 = 0
            do {
                let cat = try FerryProcess(executable: "/bin/cat")
                pid = cat.pid
            }
            errno = 0
            #expect(kill(pid, 0) == -1 && errno == ESRCH)
        }

        @Test func registryStopsEveryProcess() throws {
            let registry = ProcessRegistry()
            defer { registry.stopAll() }
            // Neither reads stdin, so closing it (which stopAll does first) does not end them.
            let polite = try registry.start(executable: "tail", arguments: ["-f", "/dev/null"])
            let stubborn = try registry.start(
                executable: "/bin/sh",
                arguments: ["-c", "trap '' TERM; echo ready; exec tail -f /dev/null"])
            _ = try stubborn.nextLine()  // the trap is set
            registry.stopAll(grace: .milliseconds(300))
            #expect(polite.exitStatus == 128 + SIGTERM)
            #expect(stubborn.exitStatus == 128 + SIGKILL)
            #expect(registry.all.isEmpty)
        }

        @Test func temporaryDirectoryIsRemovedWhenBodyThrows() async throws {
            struct Planned: Error {}
            var path = ""
            await #expect(throws: Planned.self) {
                try await TemporaryDirectory.with { directory in
                    path = directory.path
                    _ = FileManager.default.createFile(atPath: directory.path + "/file", contents: Data([1, 2, 3]))
                    throw Planned()
                }
            }
            #expect(!path.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: path))
        }

        @Test func missingBinaryErrorSaysHowToBuild() {
            let error = #expect(throws: TestSupportError.self) { try FerryBinary.locate(named: "ferry-no-such-product") }
            #expect("\(error.map { "\($0)" } ?? "")".contains("swift build"))
        }
    }
}

extension IntegrationTests {
    @Suite("FerryBinary")
    struct FerryBinaryTests {
        @Test func locatesTheBuiltFerry() throws {
            let url = try FerryBinary.url
            #expect(url.lastPathComponent == "ferry" || ProcessInfo.processInfo.environment["FERRY_BINARY"] != nil)
            #expect(FileManager.default.isExecutableFile(atPath: url.path))
        }
    }
}
