import FerryTestSupport
import Foundation
import Testing

/// `ferry hash FILE...` (the real binary) prints the digest a receiver checks (PROTOCOL.md 11.7), the same as an
/// independent computation with Python's hashlib, in `sha256sum`'s shape.
@Suite(.timeLimit(.minutes(2))) struct HashCommandTests {
    /// The file digest of each file, as `<hex>  <path>` lines, computed by Python's hashlib.
    static let python = """
        import hashlib, sys
        size = int(sys.argv[1])
        for path in sys.argv[2:]:
            data = open(path, 'rb').read()
            chunks = b''.join(hashlib.sha256(data[s:s + size]).digest() for s in range(0, len(data), size))
            print(hashlib.sha256(chunks).hexdigest() + '  ' + path)
        """

    @Test func theDigestIsTheOnePythonComputes() async throws {
        guard let python = ExecutableSearch.path(of: "python3") else {
            try Test.cancel("python3 is missing (CI installs it): it computes the digests independently")
        }
        try await TemporaryDirectory.with(prefix: "hash") { directory in
            let files = TestFiles(in: directory)
            // Empty, one short chunk, exactly two chunks of 1 MiB, and three chunks with a short last one.
            let paths = [
                try files.random("empty.bin", size: 0, seed: 1).path,
                try files.random("small.txt", size: 1000, seed: 2).path,
                try files.random("two.bin", size: 2 << 20, seed: 3).path,
                try files.random("three.bin", size: (2 << 20) + 12_345, seed: 4).path,
            ]
            let ferry = try FerryBinary.url.path
            for size in [1_048_576, 65_536] {
                let expected = try FerryProcess.run(python, ["-c", Self.python, "\(size)"] + paths).requireSuccess()
                let options = size == 1_048_576 ? [] : ["--chunk-size", "\(size)"]
                let printed = try FerryProcess.run(ferry, ["hash"] + options + paths).requireSuccess()
                #expect(printed.stdout == expected.stdout, "chunk size \(size)")
                #expect(printed.stdout.split(separator: "\n").count == paths.count)
            }
            // The empty file: the SHA-256 of nothing.
            let empty = try FerryProcess.run(ferry, ["hash", paths[0]]).requireSuccess()
            #expect(empty.stdout.hasPrefix("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  "))
        }
    }

    @Test func anUnreadableFileIsReportedAndTheOthersStillHashed() async throws {
        try await TemporaryDirectory.with(prefix: "hash") { directory in
            let file = try TestFiles(in: directory).random("ok.bin", size: 10, seed: 5).path
            let missing = directory.path + "/missing.bin"
            let missingFolder = directory.path + "/missing/"
            let result = try FerryProcess.run(
                try FerryBinary.url.path, ["hash", missing, file, missingFolder, directory.path])
            #expect(result.status == 1)
            // The file, then the folder's one file (a folder is hashed file by file: HashFolderTests).
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 2 && lines.first?.hasSuffix("  " + file) == true, "\(result.stdout)")
            #expect(lines.last?.hasSuffix("  " + directory.url.lastPathComponent + "/ok.bin") == true)
            let errors = result.stderr.split(separator: "\n")
            #expect(errors.count == 2, "\(result.stderr)")
            #expect(errors.first?.hasPrefix("Error: cannot hash \(missing): ") == true, "\(result.stderr)")
            #expect(errors.last?.hasPrefix("Error: cannot hash \(missingFolder): ") == true, "\(result.stderr)")
        }
    }
}

/// `ferry hash FOLDER` hashes every regular file under the folder, each on a line with its path as `ferry send`
/// offers it (the folder's name, then the path inside it), sorted; symbolic links and special files inside are
/// skipped as `ferry send` skips them, and said so on stderr. `--json` prints one `hash` object per file.
@Suite(.timeLimit(.minutes(2))) struct HashFolderTests {
    /// `<hex>  <folder name>/<relative path>` for every regular file under the folder (symbolic links not
    /// followed), sorted by relative path: computed by Python's hashlib and os.walk.
    static let python = """
        import hashlib, os, sys
        size, root = int(sys.argv[1]), sys.argv[2]
        base = os.path.basename(root.rstrip('/'))
        found = []
        for folder, folders, files in os.walk(root):
            for name in files:
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    found.append(os.path.relpath(path, root))
        for relative in sorted(found):
            data = open(os.path.join(root, relative), 'rb').read()
            chunks = b''.join(hashlib.sha256(data[s:s + size]).digest() for s in range(0, len(data), size))
            print(hashlib.sha256(chunks).hexdigest() + '  ' + base + '/' + relative)
        """

    /// A folder with nested files, an empty file, a name with a space, a symbolic link to a file, one to a folder,
    /// and a FIFO.
    static func makeAlbum(in directory: TemporaryDirectory) throws -> String {
        let files = TestFiles(in: directory)
        try files.random("album/b.bin", size: 1000, seed: 11)
        try files.text("album/a/z.txt", size: (3 << 20) + 7, seed: 12)
        try files.random("album/a/y.bin", size: 0, seed: 13)
        try files.random("album/c d.bin", size: 70_000, seed: 14)
        try files.random("album/a/deeper/x.bin", size: 5, seed: 15)
        let album = directory.path + "/album"
        try FileManager.default.createSymbolicLink(atPath: album + "/link.bin", withDestinationPath: "b.bin")
        try FileManager.default.createSymbolicLink(atPath: album + "/linked", withDestinationPath: "a")
        try #require(mkfifo(album + "/pipe", 0o600) == 0, "mkfifo: \(errno)")
        return album
    }

    @Test func aFolderIsHashedFileByFileWithThePathsSendOffers() async throws {
        guard let python = ExecutableSearch.path(of: "python3") else {
            try Test.cancel("python3 is missing (CI installs it): it computes the digests independently")
        }
        try await TemporaryDirectory.with(prefix: "hash-folder") { directory in
            let album = try Self.makeAlbum(in: directory)
            let single = try TestFiles(in: directory).random("single.bin", size: 10, seed: 16).path
            let ferry = try FerryBinary.url.path
            for size in [1_048_576, 65_536] {
                let expected = try FerryProcess.run(python, ["-c", Self.python, "\(size)", album]).requireSuccess()
                let options = size == 1_048_576 ? [] : ["--chunk-size", "\(size)"]
                let printed = try FerryProcess.run(ferry, ["hash"] + options + [album]).requireSuccess()
                #expect(printed.stdout == expected.stdout, "chunk size \(size)")
                let lines = printed.stdout.split(separator: "\n").map { String($0.dropFirst(66)) }
                #expect(
                    lines == ["album/a/deeper/x.bin", "album/a/y.bin", "album/a/z.txt", "album/b.bin", "album/c d.bin"])
                // The links and the FIFO are left out, and said so (not an error: exit status 0).
                #expect(
                    printed.stderr.contains("skipped 2 symbolic links and 1 special file in the folders hashed"),
                    "\(printed.stderr)")
            }
            // A folder given with a trailing slash, or as its symbolic link, prints the same lines; a file named
            // beside it keeps the path as given.
            try FileManager.default.createSymbolicLink(
                atPath: directory.path + "/album-link", withDestinationPath: "album")
            let slashed = try FerryProcess.run(ferry, ["hash", album + "/", single]).requireSuccess()
            let plain = try FerryProcess.run(ferry, ["hash", album]).requireSuccess()
            #expect(slashed.stdout.split(separator: "\n").dropLast().joined(separator: "\n") == plain.stdout)
            #expect(slashed.stdout.hasSuffix("  " + single), "\(slashed.stdout)")
            let viaLink = try FerryProcess.run(ferry, ["hash", directory.path + "/album-link"]).requireSuccess()
            #expect(viaLink.stdout == plain.stdout.replacingOccurrences(of: "  album/", with: "  album-link/"))
        }
    }

    @Test func jsonPrintsOneHashObjectPerFileAndTheSkippedEntries() async throws {
        try await TemporaryDirectory.with(prefix: "hash-json") { directory in
            let album = try Self.makeAlbum(in: directory)
            let ferry = try FerryBinary.url.path
            let text = try FerryProcess.run(ferry, ["hash", album]).requireSuccess()
            let json = try FerryProcess.run(ferry, ["hash", "--json", album]).requireSuccess()
            #expect(json.stderr == "", "\(json.stderr)")
            let objects = json.stdout.split(separator: "\n").map { String($0) }
            let document = try EventsDocument.load(besides: #filePath)
            #expect(document.undocumented(in: objects, command: "ferry hash --json") == [])
            let decoded = objects.compactMap(TransferHarness.json)
            #expect(decoded.count == objects.count)
            let hashes = decoded.filter { $0["event"] as? String == "hash" }
            let skipped = decoded.filter { $0["event"] as? String == "skipped" }
            // The same digests and names as the text lines, in the same order.
            let textLines = text.stdout.split(separator: "\n").map(String.init)
            #expect(hashes.map { "\($0["digest"] as? String ?? "")  \($0["name"] as? String ?? "")" } == textLines)
            #expect(hashes.map { $0["path"] as? String } == textLines.map { album + "/" + $0.dropFirst(66 + 6) })
            #expect(hashes.map { $0["size"] as? Int } == [5, 0, (3 << 20) + 7, 1000, 70_000])
            #expect(hashes.allSatisfy { $0["chunkSize"] as? Int == 1_048_576 })
            #expect(
                skipped.map { "\($0["name"] as? String ?? "") \($0["kind"] as? String ?? "")" } == [
                    "album/link.bin symbolicLink", "album/linked symbolicLink", "album/pipe special",
                ])
        }
    }
}

extension IntegrationTests {
    /// The digest in the JSON file events of both sides is the one `ferry hash` prints for the original.
    @Suite(.serialized) struct DigestInEventsTests {
        @Test func bothSidesReportTheDigestThatFerryHashPrints() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("data.bin", size: (3 << 20) + 5, seed: 9)
            let hashed = try FerryProcess.run(try FerryBinary.url.path, ["hash", file.path]).requireSuccess()
            let expected = String(hashed.stdout.prefix(64))
            let (receiver, port) = try harness.receiver()
            let sender = try harness.sender([file.path], to: [port])
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            for (side, process) in [("sender", sender), ("receiver", receiver)] {
                let events = process.allStdoutLines.compactMap(TransferHarness.json)
                let fileEvent = try #require(events.last { $0["event"] as? String == "file" }, "\(side): \(events)")
                #expect(fileEvent["digest"] as? String == expected, "\(side): \(fileEvent)")
            }
            let copy = try FerryProcess.run(
                try FerryBinary.url.path, ["hash", harness.inbox.path + "/data.bin"]
            ).requireSuccess()
            #expect(copy.stdout.prefix(64) == hashed.stdout.prefix(64))
        }
    }
}
