import FerryTransfer
import FerryWire

#if canImport(Glibc)
    import Glibc
#endif

/// The files of a folder, the entries skipped in it and its empty folders (`SourceFile.folder(_:)`).
typealias FolderListing = (files: [SourceFile], skipped: [SourceFile.Skipped], folders: [String])

extension HashCommand {
    /// Hashes each file in turn and prints its line (or its `hash` object with `--json`); a folder is hashed file by
    /// file, each regular file under it in the order `ferry send` offers them. A file or folder that cannot be read
    /// is reported on stderr and makes the exit status 1, and the others are still hashed (as `sha256sum` does).
    public func run(context: CommandContext) async throws -> ExitCode {
        var status = ExitCode.success
        var skipped: [SourceFile.Skipped] = []
        for argument in files {
            var information = stat()
            let isFolder = stat(argument, &information) == 0 && information.st_mode & S_IFMT == S_IFDIR
            guard isFolder else {
                let name = argument.split(separator: "/").last.map(String.init) ?? argument
                if !(await hash(path: argument, shown: argument, name: name, context)) {
                    status = .failure
                }
                continue
            }
            let found = await Task.detached { () -> Result<FolderListing, TransferError> in
                Result { () throws(TransferError) in try SourceFile.folder(argument) }
            }.value
            guard case .success(let listing) = found else {
                if case .failure(let error) = found {
                    context.stderr.writeLine(
                        "Error: cannot hash \(TerminalText.escape(argument)): \(TerminalText.escape("\(error)"))")
                }
                status = .failure
                continue
            }
            if json {
                for entry in listing.skipped {
                    let line = JSONLine(
                        event: JSONEvents.Hash.skipped,
                        ["name": .string(entry.name), "kind": .string(entry.kind.rawValue)])
                    context.stdout.writeLine(line.text)
                }
            }
            skipped += listing.skipped
            for file in listing.files where !(await hash(path: file.path, shown: file.name, name: file.name, context)) {
                status = .failure
            }
            if json {
                // The empty folders `ferry send` offers besides the files (its folders section), named as it does.
                for folder in listing.folders {
                    context.stdout.writeLine(JSONLine(event: JSONEvents.Hash.folder, ["name": .string(folder)]).text)
                }
            }
        }
        if !json { reportSkipped(skipped, context: context) }
        return status
    }

    /// Hashes one file and prints it as `shown` (text) or as `name` and `path` (JSON); false when it failed.
    private func hash(path: String, shown: String, name: String, _ context: CommandContext) async -> Bool {
        let chunkSize = self.chunkSize
        let digest = await Task.detached { () -> Result<(digest: [UInt8], size: Int), any Error> in
            Result {
                let digest = try FileDigest.ofFile(path: path, chunkSize: chunkSize)
                var information = stat()
                // The size after hashing: what was read, unless the file changed meanwhile.
                return (digest, stat(path, &information) == 0 ? Int(information.st_size) : 0)
            }
        }.value
        switch digest {
        case .success(let result):
            if json {
                let line = JSONLine(
                    event: JSONEvents.Hash.hash,
                    [
                        "name": .string(name), "path": .string(path), "size": .int(result.size),
                        "digest": .string(Self.hex(result.digest)), "chunkSize": .int(chunkSize),
                    ])
                context.stdout.writeLine(line.text)
            } else {
                context.stdout.writeLine(Self.line(digest: result.digest, file: shown))
            }
            return true
        case .failure(let error):
            context.stderr.writeLine(
                "Error: cannot hash \(TerminalText.escape(path)): \(TerminalText.escape("\(error)"))")
            return false
        }
    }

    /// Says on stderr which entries of the folders hashed were left out, as `ferry send` does for the folders it
    /// sends: a count, and each one with `-v`.
    private func reportSkipped(_ skipped: [SourceFile.Skipped], context: CommandContext) {
        guard !skipped.isEmpty else { return }
        context.stderr.writeLine(
            "skipped \(SkippedEntries.counted(skipped)) "
                + "in the folders hashed (only regular files are hashed, as ferry send sends only those)"
                + (global.verbose > 0 ? ":" : "; -v lists them"))
        guard global.verbose > 0 else { return }
        for entry in skipped {
            let what: String
            switch entry.kind {
            case .symbolicLink: what = "a symbolic link (not followed)"
            case .special: what = "not a regular file"
            case .undecodableName: what = "its name is not UTF-8"
            }
            context.stderr.writeLine("  skipped \(TerminalText.escape(entry.name)): \(what)")
        }
    }

    /// `<64 hex digits>  <file>`. A name with a backslash, a control character or a bidi control is marked as
    /// `sha256sum` marks an escaped name, with a backslash before the line, and escaped so that every line stays one
    /// line and shows what the name holds: `\` is `\\`, a newline `\n` (both as `sha256sum` writes them), and every
    /// other character that `TerminalText.escape` makes visible (ESC, CR, TAB, DEL, C1 controls, bidi overrides) is
    /// `\u{HEX}`, as ferry shows every name it did not choose. Scalar by scalar: "\r\n" is one `Character`.
    static func line(digest: [UInt8], file: String) -> String {
        let hex = Self.hex(digest)
        guard file.unicodeScalars.contains(where: { $0 == "\\" || TerminalText.needsEscape($0) }) else {
            return "\(hex)  \(file)"
        }
        var escaped = ""
        for scalar in file.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped += TerminalText.escape(String(scalar))
            }
        }
        return "\\\(hex)  \(escaped)"
    }

    /// A digest as lowercase hex digits, as `ferry hash` and the `digest` of JSON file events show it.
    static func hex(_ digest: [UInt8]) -> String {
        Hex.string(digest)
    }
}
