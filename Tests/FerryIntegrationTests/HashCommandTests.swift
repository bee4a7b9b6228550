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
            let result = try FerryProcess.run(try FerryBinary.url.path, ["hash", missing, file, directory.path])
            #expect(result.status == 1)
            #expect(result.stdout.hasSuffix("  " + file) && result.stdout.split(separator: "\n").count == 1)
            let errors = result.stderr.split(separator: "\n")
            #expect(errors.count == 2, "\(result.stderr)")
            #expect(errors.first?.hasPrefix("Error: cannot hash \(missing): ") == true, "\(result.stderr)")
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
