import FerryTransfer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The partial files a receive directory keeps for resuming (`DIR/.ferry-staging`): their expiry when a receiver
/// starts, and `--clear-staged`.
extension ReceiveCommand {
    /// Staged data untouched (no byte written) for this long is removed when `ferry receive` starts: a sender that
    /// has not resumed within a week is unlikely to, and the bytes would otherwise stay forever.
    public static let stagedExpiry = Duration.seconds(7 * 24 * 3600)

    /// The staging folder's path inside `directory`.
    static func stagingPath(_ directory: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + ".ferry-staging"
    }

    /// `--clear-staged`: removes every staged file of the directory that no running transfer holds, says what it
    /// removed, and exits. Creates nothing: a directory (or staging folder) that does not exist has nothing staged.
    func clearStaged(context: CommandContext) throws -> ExitCode {
        let directory = into.map { Self.absolute($0) } ?? DownloadDirectory.resolve(environment: context.environment)
        let staging = Self.stagingPath(directory)
        var status = stat()
        var removal = StagedRemoval()
        if lstat(staging, &status) == 0 {
            let receiveDirectory: ReceiveDirectory
            do {
                receiveDirectory = try ReceiveDirectory(path: directory)
            } catch {
                throw CLIError.failure("cannot clear \(TerminalText.excerpt(staging)): \(error)")
            }
            defer { receiveDirectory.close() }
            removal = receiveDirectory.removeStaged(untouchedFor: nil)
        }
        report(removal, staging: staging, reason: "cleared", context: context)
        return .success
    }

    /// Removes the staged files older than `stagedExpiry` from the directory a receiver is starting on, and says so
    /// when there were any.
    func expireStaged(in directory: String, context: CommandContext) {
        guard let receiveDirectory = try? ReceiveDirectory(path: directory) else { return }
        defer { receiveDirectory.close() }
        let removal = receiveDirectory.removeStaged(untouchedFor: Self.stagedExpiry)
        if removal.files > 0 {
            report(removal, staging: Self.stagingPath(directory), reason: "expired", context: context)
        }
    }

    /// `removed 2 staged files (1.5 MB) from DIR/.ferry-staging`, or the JSON line
    /// `{"event":"stagedRemoved","directory":...,"files":2,"bytes":1500000,"inUse":0,"reason":"cleared"}`.
    private func report(_ removal: StagedRemoval, staging: String, reason: String, context: CommandContext) {
        if json {
            let line = JSONLine(
                event: JSONEvents.Transfers.stagedRemoved,
                [
                    "directory": .string(staging), "files": .int(removal.files),
                    "bytes": .int(Int(clamping: removal.bytes)), "inUse": .int(removal.inUse),
                    "reason": .string(reason),
                ])
            context.stdout.writeLine(line.text)
            return
        }
        let shown = TerminalText.escape(staging)
        let files = removal.files == 1 ? "1 staged file" : "\(removal.files) staged files"
        var text =
            removal.files == 0 && reason == "cleared"
            ? "nothing staged to remove in \(shown)"
            : "removed \(files) (\(TransferFormat.bytes(removal.bytes))) from \(shown)"
        if reason == "expired" {
            text += " (partial files of transfers untouched for 7 days)"
        }
        if removal.inUse > 0 {
            text += "; kept \(removal.inUse) that a running transfer holds"
        }
        (reason == "cleared" ? context.stdout : context.stderr).writeLine(text)
    }
}
