import FerrySystem
import Foundation
import Glibc

/// A child started by `ChildSpawner`: its PID and the parent's ends of its three pipes.
struct SpawnedChild: Sendable {
    let pid: Int32
    let stdinWrite: Int32
    let stdoutRead: Int32
    let stderrRead: Int32
}

/// Starts a child with `posix_spawnp`, its stdio on fresh pipes (or stdin and stdout on a given socket, as inetd
/// starts a server) and no other descriptor inherited.
///
/// Why not `Foundation.Process`: we need the exact PID (signals, `waitid`), default signal
/// dispositions in the child even though the test process ignores SIGPIPE, and a guarantee that
/// no descriptor of a concurrently running test leaks into this child (closefrom(3)).
enum ChildSpawner {
    /// - Parameter standardIO: a descriptor (a connected socket) that becomes the child's stdin and stdout instead of
    ///   the pipes; the parent's stdout reader then sees end of file at once and writes to stdin fail.
    static func spawn(
        argv: [String], environment: [String: String], directory: String?, standardIO: Int32? = nil
    ) throws -> SpawnedChild {
        precondition(!argv.isEmpty, "argv needs at least the executable")
        _ = Descriptor.ignoreBrokenPipe
        var opened: [Int32] = []
        defer { opened.forEach(Descriptor.close) }
        let stdinPipe = try GNUCalls.makePipe()
        opened += [stdinPipe.read, stdinPipe.write]
        let stdoutPipe = try GNUCalls.makePipe()
        opened += [stdoutPipe.read, stdoutPipe.write]
        let stderrPipe = try GNUCalls.makePipe()
        opened += [stderrPipe.read, stderrPipe.write]

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardIO ?? stdinPipe.read, 0)
        posix_spawn_file_actions_adddup2(&actions, standardIO ?? stdoutPipe.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, 2)
        // Every other descriptor is close-on-exec already; closefrom also covers foreign code's fds.
        _ = GNUCalls.addCloseFrom(&actions, 3)
        if let directory {
            let result = GNUCalls.addChangeDirectory(&actions, directory)
            guard result == 0 else {
                throw TestSupportError.systemCall("posix_spawn_file_actions_addchdir_np", errno: result)
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let arguments = argv.map { strdup($0) } + [nil]
        let variables = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            arguments.forEach { free($0) }
            variables.forEach { free($0) }
        }
        var pid: pid_t = 0
        // Under the fence: an engine in this process publishing a file meanwhile would otherwise have a watcher see
        // it closed again when this child drops its copy of the staged file's descriptor at `exec` (SpawnFence).
        let result = SpawnFence.spawning {
            posix_spawnp(&pid, argv[0], &actions, &attributes, arguments, variables)
        }
        guard result == 0 else {
            throw TestSupportError.spawnFailed(command: argv.joined(separator: " "), errno: result)
        }
        opened = [stdinPipe.read, stdoutPipe.write, stderrPipe.write]
        return SpawnedChild(
            pid: pid, stdinWrite: stdinPipe.write, stdoutRead: stdoutPipe.read,
            stderrRead: stderrPipe.read)
    }
}

extension Process {
    /// `run()` under `SpawnFence`, for the tests that start a child through Foundation: a receiving engine of this
    /// process publishes no file while the child is between `clone` and `exec`.
    public func runFenced() throws {
        try SpawnFence.spawning { try run() }
    }
}
