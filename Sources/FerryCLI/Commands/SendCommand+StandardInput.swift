import FerryStateMachines
import FerryTransfer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SendCommand {
    /// What `send` sends: the files named, with standard input (`-`) read into its spool among them.
    struct Sources {
        var files: [SourceFile]
        /// The empty folders of the folders sent (the offer's folders section), named as the files are.
        var folders: [String] = []
        /// The bytes of every file, for the summary.
        var bytes: UInt64
        /// Keeps standard input's copy open while the transfer runs.
        var spool: StandardInputSpool?
    }

    static let pickerNeedsATerminal = CLIError.usage(
        "no peer given: name peers with --to PEER, or send to every peer with --all "
            + "(without them a picker is shown, which needs a terminal)")

    /// The files named (checked first), then standard input read to its end when `-` is among them.
    ///
    /// When standard input was a pipe and stderr is a terminal, stdin is reopened on `/dev/tty` afterwards (and
    /// `context` says so), so that the picker and the pairing-code question still reach the person at it.
    func collectSources(context: inout CommandContext) async throws -> Sources {
        // A --text alone has no files (validate() allows that only with --text).
        guard !files.isEmpty else { return Sources(files: [], bytes: 0, spool: nil) }
        let readsStandardInput = files.contains(Self.standardInput)
        var sources: [SourceFile] = []
        var skipped: [SourceFile.Skipped] = []
        var folders: [String] = []
        defer { reportSkipped(skipped, context: context) }
        do {
            sources = try SourceFile.collect(
                files.filter { $0 != Self.standardInput }, skipped: &skipped, folders: &folders)
        } catch .nothingToSend where readsStandardInput {
            // `-` alone, or beside empty directories: standard input is still something to send.
        } catch {
            throw CLIError.failure(error.description)
        }
        var bytes = sources.reduce(UInt64(0)) { $0 &+ Self.size(of: $1.path) }
        guard readsStandardInput else {
            if let name = standardInputName {
                folders = try Self.renamed(folders, of: sources, as: name)
                sources = try Self.renamed(sources, as: name)
            }
            return Sources(files: sources, folders: folders, bytes: bytes, spool: nil)
        }
        let name = standardInputName ?? Self.defaultStandardInputName
        if let clash = sources.first(where: { $0.name == name }) {
            throw CLIError.usage(
                "standard input would be sent as '\(TerminalText.escape(name))', which is also the name of "
                    + "\(TerminalText.excerpt(clash.path)); choose another name with --as")
        }
        let picking = targets.isEmpty && !all
        let terminalReachable = context.isStdinTerminal || Self.terminalCanBeOpened()
        if picking, !(context.isStderrTerminal && terminalReachable) {
            throw Self.pickerNeedsATerminal
        }
        if context.isStdinTerminal {
            context.stderr.writeLine("reading from the terminal; end with Ctrl-D")
        }
        let stderr = context.stderr
        let spool = try await StandardInputSpool.spool(
            into: StandardInputSpool.directory(context.environment), say: { stderr.writeLine($0) })
        let shownName = "'\(TerminalText.escape(name))'"
        if spool.size == 0 {
            context.stderr.writeLine("standard input was empty: sending an empty file \(shownName)")
        } else if standardInputName == nil {
            context.stderr.writeLine("sending standard input as \(shownName) (choose the name with --as NAME)")
        }
        if !context.isStdinTerminal, context.isStderrTerminal, context.trapsSignals, Self.reopenTerminal() {
            context.isStdinTerminal = true
        }
        sources.append(SourceFile(path: spool.path, name: name))
        bytes &+= spool.size
        return Sources(files: sources, folders: folders, bytes: bytes, spool: spool)
    }

    /// The one FILE sent, under `name` (`--as` without `-`): a file is offered as `name`; a folder's files as
    /// `name/...` in place of the folder's own name. Each name is checked as a receiver checks it (`NameValidator`),
    /// so a name too long once the folder's paths are under it is refused here, before anything is sent.
    static func renamed(_ sources: [SourceFile], as name: String) throws(CLIError) -> [SourceFile] {
        // One FILE was given (validate()): a file collects to one entry whose name has no "/", a folder to entries
        // named "folder/...".
        let isFolder = sources.count > 1 || sources.contains { $0.name.contains("/") }
        return try sources.map { source throws(CLIError) in
            var renamed = source
            if isFolder {
                let inside = source.name.split(separator: "/", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
                renamed.name = name + "/" + inside
            } else {
                renamed.name = name
            }
            if case .failure(let error) = NameValidator.components(of: renamed.name) {
                throw .usage("--as: '\(TerminalText.excerpt(renamed.name))' cannot be sent as a name: \(error)")
            }
            return renamed
        }
    }

    /// The empty folders of the one folder sent under `name` (`--as`), as `renamed(_:as:)` names its files.
    static func renamed(_ folders: [String], of sources: [SourceFile], as name: String) throws(CLIError) -> [String] {
        try folders.map { folder throws(CLIError) in
            let inside = folder.split(separator: "/", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            let renamed = name + "/" + inside
            if case .failure(let error) = NameValidator.components(of: renamed) {
                throw .usage("--as: '\(TerminalText.excerpt(renamed))' cannot be sent as a name: \(error)")
            }
            return renamed
        }
    }

    /// Says which entries of the folders sent were left out (symbolic links, special files, names that are not
    /// UTF-8): a count, each one with `-v`; with `--json`, one
    /// `{"event":"skipped","name":...,"kind":"symbolicLink"|"special"|"undecodableName"}` line each.
    func reportSkipped(_ skipped: [SourceFile.Skipped], context: CommandContext) {
        guard !skipped.isEmpty else { return }
        if json {
            for entry in skipped {
                let line = JSONLine(
                    event: JSONEvents.Transfers.skipped,
                    ["name": .string(entry.name), "kind": .string(entry.kind.rawValue)])
                context.stdout.writeLine(line.text)
            }
            return
        }
        let why =
            skipped.contains { $0.kind == .undecodableName }
            ? "only regular files with UTF-8 names are sent; rename the others to send them"
            : "only regular files are sent"
        context.stderr.writeLine(
            "skipped \(SkippedEntries.counted(skipped)) "
                + "in the folders sent (\(why))"
                + (global.verbose > 0 ? ":" : "; -v lists them"))
        if global.verbose > 0 {
            for entry in skipped {
                let what: String
                switch entry.kind {
                case .symbolicLink: what = "a symbolic link"
                case .special: what = "not a regular file"
                case .undecodableName: what = "its name is not UTF-8 (shown with \u{FFFD} for the bytes that are not)"
                }
                context.stderr.writeLine("  skipped \(TerminalText.escape(entry.name)): \(what)")
            }
        }
    }

    /// Whether this process has a controlling terminal it can read.
    private static func terminalCanBeOpened() -> Bool {
        let descriptor = open("/dev/tty", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// Makes the controlling terminal the process's standard input; false when there is none.
    private static func reopenTerminal() -> Bool {
        let descriptor = open("/dev/tty", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return dup2(descriptor, STDIN_FILENO) == STDIN_FILENO
    }
}
