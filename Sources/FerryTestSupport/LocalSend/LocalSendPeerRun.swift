import Foundation

/// A test peer's process and its own home directory, which live and go together: when the wrapper holding them goes
/// (or its start-up throws once the process runs), the process is stopped and the directory removed. The start-up
/// and teardown `LocalSendDaemon`, `LocalSendCLIReceiver` and `LocalSendApp` share.
final class LocalSendPeerRun: Sendable {
    /// The peer's HOME and XDG directories (`LocalSendPeers.start`).
    let home: TemporaryDirectory
    /// The peer's process.
    let process: FerryProcess

    /// Makes a home directory named with `prefix` and starts in it the process `start` returns; the directory is
    /// removed when `start` throws.
    init(prefix: String, start: (TemporaryDirectory) throws -> FerryProcess) throws {
        let home = try TemporaryDirectory(prefix: prefix)
        do {
            process = try start(home)
        } catch {
            home.remove()
            throw error
        }
        self.home = home
    }

    deinit {
        stop()
        home.remove()
    }

    /// SIGTERM, SIGKILL after 5 s; idempotent.
    func stop() {
        if process.isRunning { _ = try? process.terminate() }
    }
}
