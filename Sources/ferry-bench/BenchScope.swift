import Dispatch
import FerryTestSupport
import Foundation
import Glibc
import Synchronization

/// Everything the transfer bench started or created: processes, temporary directories, test beds.
///
/// Why one owner: a row that fails half-way, or a Ctrl-C in the middle of a 4 GiB copy, must not leave a
/// `ferry` listening, gigabytes in /tmp or network namespaces behind; every row ends with `cleanUp()`,
/// and SIGINT, SIGTERM and SIGHUP run the same clean-up before the bench exits.
final class BenchScope: Sendable {
    static let shared = BenchScope()

    private let processes = ProcessRegistry()
    private let directories = Mutex<[TemporaryDirectory]>([])
    private let beds = Mutex<[TestBed]>([])
    /// Held for a whole clean-up, so a second caller (the main flow after a signal) waits for the first.
    private let cleaning = Mutex(())
    /// Set by a signal: nothing new may start while the bench is exiting.
    private let interrupted = Mutex(false)

    /// Starts and registers a process (a namespace runs it under `ip netns exec`; `standardIO`: see `FerryProcess`).
    func start(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], namespace: String? = nil,
        standardIO: Int32? = nil
    ) throws -> FerryProcess {
        try checkNotInterrupted()
        return try processes.start(
            executable: executable, arguments: arguments, environment: environment, namespace: namespace,
            standardIO: standardIO)
    }

    /// A new temporary directory that `cleanUp` removes.
    func directory(_ prefix: String) throws -> TemporaryDirectory {
        try checkNotInterrupted()
        let directory = try TemporaryDirectory(prefix: prefix)
        directories.withLock { $0.append(directory) }
        return directory
    }

    /// A new test bed that `cleanUp` destroys.
    func bed(hosts: Int, name: String) throws -> TestBed {
        try checkNotInterrupted()
        TestBed.removeStale()
        let bed = try TestBed.create(hosts: hosts, name: name)
        beds.withLock { $0.append(bed) }
        return bed
    }

    /// Stops every process (SIGTERM, SIGKILL after `grace`), destroys beds, removes directories.
    func cleanUp(grace: Duration = .seconds(5)) {
        cleaning.withLock { _ in removeEverything(grace: grace) }
    }

    private func removeEverything(grace: Duration) {
        processes.stopAll(grace: grace)
        let beds = self.beds.withLock { list in
            defer { list.removeAll() }
            return list
        }
        beds.forEach { $0.destroy() }
        let directories = self.directories.withLock { list in
            defer { list.removeAll() }
            return list
        }
        directories.forEach { $0.remove() }
    }

    /// On SIGINT, SIGTERM or SIGHUP: clean up, say so, and exit with 128 + the signal number.
    ///
    /// Returns the dispatch sources that watch the signals; the caller keeps them alive while it runs.
    func cleanUpOnSignals() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM, SIGHUP].map { number in
            _ = signal(number, SIG_IGN)  // delivered to the source below instead
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(Data("\nferry-bench: signal \(number), cleaning up\n".utf8))
                interrupted.withLock { $0 = true }
                cleanUp(grace: .seconds(1))
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    private func checkNotInterrupted() throws {
        if interrupted.withLock({ $0 }) { throw BenchFailure("interrupted") }
    }
}
