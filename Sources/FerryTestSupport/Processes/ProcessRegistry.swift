import Foundation
import Synchronization

/// Every process a test started, so one `defer { registry.stopAll() }` cleans them all up.
///
/// Why: a test that throws half-way must still stop the three `ferry` instances it started;
/// keeping them in one place makes that a single line, whatever path the test takes.
public final class ProcessRegistry: Sendable {
    private let processes = Mutex<[FerryProcess]>([])

    public init() {}

    /// Adds `process` to the registry and returns it.
    @discardableResult
    public func register(_ process: FerryProcess) -> FerryProcess {
        processes.withLock { $0.append(process) }
        return process
    }

    /// Starts and registers a process (see `FerryProcess.init`).
    public func start(
        executable: String, arguments: [String] = [], environment: [String: String] = [:],
        namespace: String? = nil, currentDirectory: URL? = nil, standardIO: Int32? = nil
    ) throws -> FerryProcess {
        register(
            try FerryProcess(
                executable: executable, arguments: arguments, environment: environment,
                namespace: namespace, currentDirectory: currentDirectory, standardIO: standardIO))
    }

    /// Starts and registers the built `ferry` executable.
    public func startFerry(
        _ arguments: [String], environment: [String: String] = [:], namespace: String? = nil,
        currentDirectory: URL? = nil
    ) throws -> FerryProcess {
        register(
            try FerryProcess.ferry(
                arguments, environment: environment, namespace: namespace,
                currentDirectory: currentDirectory))
    }

    /// All registered processes, in start order.
    public var all: [FerryProcess] { processes.withLock { $0 } }

    /// Closes every process's stdin and sends SIGTERM, SIGKILLs those still running after `grace`, reaps all.
    public func stopAll(grace: Duration = .seconds(5)) {
        let running = processes.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for process in running where process.isRunning {
            process.closeStdin()
            process.signal(SIGTERM)
        }
        for process in running {
            if (try? process.waitForExit(timeout: grace)) == nil {
                process.kill()
                _ = try? process.waitForExit(timeout: .seconds(30))
            }
        }
    }
}
