import Foundation
import Glibc
import Synchronization

/// A child process (usually `ferry`) driven by a test: stdin pipe, captured stdout and stderr
/// lines, signals, and an exit status.
///
/// Why: integration tests run the real binary, several at a time and in network namespaces. They
/// must wait for output without sleeping, always see what the child printed when something fails,
/// and never leave a child behind: the process is killed and reaped when this object goes away.
///
/// The child's PID stays valid until this object has reaped it, so signals never hit a stranger:
/// a reaper thread waits with `waitid(WNOWAIT)` and reaps under the same lock that `signal` uses.
public final class FerryProcess: Sendable, CustomStringConvertible {
    struct ExitState: Sendable {
        /// Exit code, or 128 + signal number; -1 when someone else reaped the child.
        var status: Int32?
        /// What `wait4` reported when the child was reaped.
        var usage: ResourceUsage?
    }

    /// The child's PID (with a namespace, `ip netns exec` execs, so this is the program's PID).
    public let pid: Int32
    /// The command as run, for messages.
    public let commandLine: [String]
    let stdout = OutputCapture(name: "stdout")
    let stderr = OutputCapture(name: "stderr")
    let exit = Monitor(ExitState())
    private let stdinFD: Mutex<Int32?>
    private let wakePipe: (read: Int32, write: Int32)

    /// Starts `executable` (a path, or a name looked up on PATH) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: added to (and overriding) this process's environment.
    ///   - namespace: a network namespace name; runs `ip netns exec NAME executable ...`.
    ///   - currentDirectory: the child's working directory (default: ours).
    ///   - standardIO: a connected socket to give the child as stdin and stdout (an inetd-style server such as
    ///     `sshd -i`); the caller keeps and closes its own descriptor. Only stderr is captured then.
    public init(
        executable: String, arguments: [String] = [], environment: [String: String] = [:],
        namespace: String? = nil, currentDirectory: URL? = nil, standardIO: Int32? = nil
    ) throws {
        var argv = [executable] + arguments
        if let namespace {
            let ip = ExecutableSearch.path(of: "ip") ?? "ip"
            argv = [ip, "netns", "exec", namespace] + argv
        }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        wakePipe = try GNUCalls.makePipe()
        let child: SpawnedChild
        do {
            child = try ChildSpawner.spawn(
                argv: argv, environment: variables, directory: currentDirectory?.path, standardIO: standardIO)
        } catch {
            Descriptor.close(wakePipe.read)
            Descriptor.close(wakePipe.write)
            throw error
        }
        pid = child.pid
        commandLine = argv
        stdinFD = Mutex(child.stdinWrite)
        stdout.start(reading: child.stdoutRead, wakeFD: wakePipe.read)
        stderr.start(reading: child.stderrRead, wakeFD: wakePipe.read)
        let exit = self.exit
        let pid = child.pid
        let reaper = Thread { FerryProcess.reap(pid: pid, into: exit) }
        reaper.name = "ferry-test-reaper-\(pid)"
        reaper.start()
    }

    /// Starts the built `ferry` executable (see `FerryBinary`) with `arguments`.
    public static func ferry(
        _ arguments: [String], environment: [String: String] = [:],
        namespace: String? = nil, currentDirectory: URL? = nil
    ) throws -> FerryProcess {
        try FerryProcess(
            executable: FerryBinary.url.path, arguments: arguments, environment: environment,
            namespace: namespace, currentDirectory: currentDirectory)
    }

    deinit {
        closeStdin()
        if isRunning {
            kill()
            _ = exit.wait(until: .after(.seconds(10))) { $0.status }
        }
        // Stop readers still blocked on a pipe that a grandchild holds open, then free the wake pipe.
        var byte: UInt8 = 1
        _ = withUnsafeBytes(of: &byte) { Descriptor.writeAll(wakePipe.write, $0, socket: false) }
        let deadline = Deadline.after(.seconds(5))
        if stdout.waitFinished(until: deadline) && stderr.waitFinished(until: deadline) {
            Descriptor.close(wakePipe.read)
            Descriptor.close(wakePipe.write)
        }
    }

    private static func reap(pid: Int32, into exit: Monitor<ExitState>) {
        var info = siginfo_t()
        // WNOWAIT: the child stays a zombie (its PID reserved) until we reap it under the lock.
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
            if errno == EINTR { continue }
            exit.withLock { $0.status = -1 }
            return
        }
        exit.withLock { state in
            var status: Int32 = 0
            var usage = rusage()
            let result = wait4(pid, &status, 0, &usage)
            state.status = result == pid ? decodeWaitStatus(status) : -1
            state.usage = result == pid ? ResourceUsage(usage) : nil
        }
    }

    /// Exit code for a normal exit, 128 + signal number for a signal.
    static func decodeWaitStatus(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    public var description: String { "`\(commandLine.joined(separator: " "))` (pid \(pid))" }

    /// True until the child has exited and been reaped.
    public var isRunning: Bool { exit.withLock { $0.status == nil } }

    /// The exit status once the child has exited (128 + signal for signals).
    public var exitStatus: Int32? { exit.withLock { $0.status } }

    /// CPU time and peak memory once the child has exited and been reaped; nil while it runs.
    public var resourceUsage: ResourceUsage? { exit.withLock { $0.usage } }

    // MARK: stdin

    /// Writes `line` and a newline to the child's stdin.
    public func send(line: String) throws {
        try writeToStdin(line + "\n")
    }

    /// Writes UTF-8 text to the child's stdin.
    public func writeToStdin(_ text: String) throws {
        try writeToStdin(Array(text.utf8))
    }

    /// Writes bytes to the child's stdin; throws when stdin is closed or the child stopped reading.
    public func writeToStdin(_ bytes: [UInt8]) throws {
        try stdinFD.withLock { fd in
            guard let descriptor = fd else { throw TestSupportError.systemCall("write(stdin)", errno: EBADF) }
            let written = bytes.withUnsafeBytes { Descriptor.writeAll(descriptor, $0, socket: false) }
            guard written else { throw TestSupportError.systemCall("write(stdin) to \(description)", errno: errno) }
        }
    }

    /// Closes the child's stdin (it reads end of file); idempotent.
    public func closeStdin() {
        stdinFD.withLock { fd in
            if let descriptor = fd { Descriptor.close(descriptor) }
            fd = nil
        }
    }

    // MARK: signals and exit

    /// Sends `signal` to the child, unless it has already been reaped.
    public func signal(_ signal: Int32) {
        exit.withLock { state in
            if state.status == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// Sends SIGKILL to the child, unless it has already been reaped.
    public func kill() {
        signal(SIGKILL)
    }

    /// Waits for the child to exit; returns its exit code, or 128 + signal number.
    ///
    /// Also waits (up to 5 s more) until the reader threads have taken in all the child wrote: without that, a line
    /// printed just before exiting could still be in the pipe when `allStdoutLines` is read.
    public func waitForExit(timeout: Duration = .seconds(30)) throws -> Int32 {
        guard let status = exit.wait(until: .after(timeout), { $0.status }) else {
            throw TestSupportError.timedOut(waitingFor: "exit", process: description, captured: capturedOutput())
        }
        let deadline = Deadline.after(.seconds(5))
        _ = stdout.waitFinished(until: deadline) && stderr.waitFinished(until: deadline)
        return status
    }

    /// `waitForExit` on a thread of its own, for the long waits of async tests (a build, a benchmark): a blocked
    /// thread of Swift's cooperative pool (there are as many as cores, two in CI) stalls every in-process session
    /// of the test run meanwhile, and two such waits at once stopped their heartbeats long enough to disconnect.
    public func exitStatus(timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.waitForExit(timeout: timeout) })
            }
        }
    }

    /// SIGTERM, then SIGKILL if the child has not exited after `grace`; returns the exit status.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) throws -> Int32 {
        signal(SIGTERM)
        if let status = try? waitForExit(timeout: grace) { return status }
        kill()
        return try waitForExit(timeout: .seconds(30))
    }
}
