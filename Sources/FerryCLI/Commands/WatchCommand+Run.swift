import FerrySession
import FerrySystem
import FerryTransfer
import Foundation

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
        try Self.checkExists(path, typed: directory)
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
                // No clause about files already there when there are none ("(0 files ... are not sent)").
                let there =
                    known.count == 0
                    ? ""
                    : known.count == 1
                        ? " (1 file already there is not sent)"
                        : " (\(known.count) files already there are not sent)"
                let stop = context.isStdinTerminal || context.isStderrTerminal ? "; Ctrl-C to stop" : ""
                context.stderr.writeLine(
                    "watching \(TerminalText.excerpt(path))\(there); new files go to \(peers)\(stop)")
            }
            let loop = WatchLoop(
                run: run, directory: handle, watcher: watcher, targets: targets, all: all, trustedOnly: trustedOnly,
                json: json)
            try await loop.run(known: known)
        }
        return .success
    }
}

extension WatchCommand {
    /// A missing directory is not created (a typo would make a folder nobody fills): ferry says how to create it.
    static func checkExists(_ path: String, typed: String) throws(CLIError) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if !exists {
            throw .failure(
                "cannot watch \(TerminalText.excerpt(path)): no such directory; create it with 'mkdir -p "
                    + "\(TerminalText.excerpt(shellQuoted(typed)))' (ferry does not create it), or name another one")
        }
        if !isDirectory.boolValue {
            throw .failure("cannot watch \(TerminalText.excerpt(path)): it is not a directory; name a directory")
        }
    }

    /// `text` as one shell word: bare when it has only characters no shell treats specially, else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                    || "/._-+,:@%".unicodeScalars.contains(scalar))
        }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
