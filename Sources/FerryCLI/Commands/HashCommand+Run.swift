import FerryTransfer
import FerryWire

extension HashCommand {
    /// Hashes each file in turn and prints its line; a file that cannot be read is reported on stderr and makes the
    /// exit status 1, and the others are still hashed (as `sha256sum` does).
    public func run(context: CommandContext) async throws -> ExitCode {
        var status = ExitCode.success
        for file in files {
            let chunkSize = self.chunkSize
            let digest = await Task.detached { () -> Result<[UInt8], any Error> in
                Result { try FileDigest.ofFile(path: file, chunkSize: chunkSize) }
            }.value
            switch digest {
            case .success(let bytes):
                context.stdout.writeLine(Self.line(digest: bytes, file: file))
            case .failure(let error):
                context.stderr.writeLine(
                    "Error: cannot hash \(TerminalText.escape(file)): \(TerminalText.escape("\(error)"))")
                status = .failure
            }
        }
        return status
    }

    /// `<64 hex digits>  <file>`, and as `sha256sum` writes it for a name with a backslash or a newline: the
    /// line starts with a backslash and the name has `\\` and `\n` in their place, so every line stays one line.
    static func line(digest: [UInt8], file: String) -> String {
        let hex = Self.hex(digest)
        guard file.contains("\\") || file.contains("\n") else { return "\(hex)  \(file)" }
        var escaped = ""
        for character in file {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return "\\\(hex)  \(escaped)"
    }

    /// A digest as lowercase hex digits, as `ferry hash` and the `digest` of JSON file events show it.
    static func hex(_ digest: [UInt8]) -> String {
        Hex.string(digest)
    }
}
