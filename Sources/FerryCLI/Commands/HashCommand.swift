import FerryWire

/// `ferry hash FILE...`: prints the ferry digest of files (a folder: of each file under it), so that a person can
/// compare a received file or folder with its original.
///
/// The digest is the one a sender puts in `fileEnd` and a receiver checks before it publishes (PROTOCOL.md 11.7):
/// the SHA-256 over the SHA-256 of each chunk, which depends on the chunk size (ferry sends 1 MiB chunks). It is
/// not the `sha256sum` of the file, so both sides of a comparison run `ferry hash`. The output has the shape of
/// `sha256sum`'s. Its run step is in `HashCommand+Run.swift`.
public struct HashCommand: ParsableCommand, Equatable {
    /// The name, help text, arguments and options of `ferry hash`.
    public static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print the ferry digest of files, to compare copies.",
        discussion: """
            Prints one line per file, '<digest>  <file>', as sha256sum does. The digest is the one ferry checks \
            before it publishes a received file: the SHA-256 over the SHA-256 of each chunk of the file, in \
            order (an empty file: the SHA-256 of nothing). It is not the file's sha256sum, and it depends on the \
            chunk size: ferry sends in chunks of 1 MiB, so the default matches every file ferry sent or received. \
            Run it on both machines and compare the lines.

            A folder is hashed file by file: every regular file under it, one line each, sorted, with the name \
            ferry send gives it (the folder's name, then the path inside it: album/2026/a.jpg), so that the lines \
            for a folder sent and for the folder received are the same wherever each one is. As ferry send does, \
            it follows no symbolic link inside a folder and skips special files (devices, sockets, FIFOs): stderr \
            says how many were skipped, -v names them. A file or a symbolic link named on the command line is \
            hashed, and shown as given.

            A name with a backslash, a control character or a bidi control gets a line that starts with a \
            backslash, as sha256sum marks it, and is escaped so that each line stays one line and shows what the \
            name holds: \\ for a backslash, \\n for a newline, and \\u{1B} (the code in hex) for every other \
            control or bidi character, as ferry shows names from peers.

            With --json, one object per file: \
            {"event":"hash","name":"album/a.jpg","path":"...","size":N,"digest":"...","chunkSize":N}, and one \
            {"event":"skipped","name":...,"kind":...} per entry skipped (docs/EVENTS.md).

            Exit status: 0 when every file was hashed, 1 when one could not be read (the others are still hashed).
            """,
        arguments: [ArgumentDefinition("file", help: "A file or folder to hash.", isRepeating: true)],
        options: [
            .option(
                "chunk-size",
                valueName: "bytes",
                help: "The chunk size the digest is computed with, \(Limits.minChunkSize) to \(Limits.maxChunkSize).",
                default: "\(Limits.defaultChunkSize)"
            ),
            .flag("json", help: "Print one JSON object per file instead of text."),
        ]
    )

    /// The paths of the files to hash, in the order their lines are printed.
    public var files: [String]
    /// Bytes per chunk, as in an offer.
    public var chunkSize: Int
    /// Whether to print JSON lines instead of text.
    public var json: Bool
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command; the chunk size defaults to the one ferry sends with (1 MiB).
    public init(
        files: [String], chunkSize: Int = Limits.defaultChunkSize, json: Bool = false, global: GlobalOptions = .init()
    ) {
        self.files = files
        self.chunkSize = chunkSize
        self.json = json
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(
            files: values.arguments, chunkSize: try values.integer("chunk-size") ?? Limits.defaultChunkSize,
            json: values.isSet("json"), global: try GlobalOptions(parsing: values))
    }

    /// Throws `CLIError.usage` when `chunkSize` is outside `Limits.minChunkSize...Limits.maxChunkSize`.
    public func validate() throws {
        guard (Limits.minChunkSize...Limits.maxChunkSize).contains(chunkSize) else {
            throw CLIError.usage(
                "--chunk-size: \(chunkSize) is not between \(Limits.minChunkSize) and \(Limits.maxChunkSize) bytes")
        }
    }
}
