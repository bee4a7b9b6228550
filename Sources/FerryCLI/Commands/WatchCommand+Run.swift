import FerrySession
import FerrySystem
import FerryTransfer

extension WatchCommand {
    /// Opens the directory and remembers what is in it, then sends what appears until Ctrl-C.
    public func run(context: CommandContext) async throws -> ExitCode {
        let path = ReceiveCommand.absolute(directory)
        let reactor: Reactor
        do {
            reactor = try Reactor()
        } catch {
            throw CLIError.failure("could not start the event loop: \(error)")
        }
        defer { reactor.shutdown() }
        // The directory is checked (and its contents remembered) before anything touches the network.
        let handle: DirectoryHandle
        let watcher: DirectoryWatcher
        var known = WatchedFiles()
        do {
            handle = try DirectoryHandle.open(path: path, createIfMissing: false)
            watcher = try DirectoryWatcher(path: path, reactor: reactor)
            for name in try handle.entries() {
                if let status = try handle.status(of: name) {
                    known.remember(.init(name: name, size: status.size, modified: status.modificationTime))
                }
            }
        } catch {
            throw CLIError.failure("cannot watch \(TerminalText.excerpt(path)): \(error)")
        }
        defer {
            watcher.close()
            handle.close()
        }
        let setup = try SessionSetup(
            global: global, context: context, mode: .client, acceptPolicy: .none, transfersEnabled: true)
        let reporter = TransferReporter(context: context, json: json)
        let configuration = TransferConfiguration(compression: compression, log: setup.configuration.log)
        try await TransferSession.run(setup: setup, engine: configuration, reporter: reporter, reactor: reactor) {
            run in
            let peers = all ? "every receiving peer" : targets.map(\.description).joined(separator: ", ")
            if json {
                reporter.emit(
                    JSONLine(
                        event: JSONEvents.Transfers.watching,
                        [
                            "directory": .string(path), "files": .int(known.count),
                            "peers": all ? .null : .array(targets.map { .string($0.text) }),
                        ]))
            } else {
                let there = known.count == 1 ? "1 file already there is" : "\(known.count) files already there are"
                context.stderr.writeLine(
                    "watching \(TerminalText.excerpt(path)) (\(there) not sent); new files go to \(peers); "
                        + "Ctrl-C to stop")
            }
            let loop = WatchLoop(
                run: run, directory: handle, watcher: watcher, targets: targets, all: all, trustedOnly: trustedOnly,
                json: json)
            try await loop.run(known: known)
        }
        return .success
    }
}
