import Testing

@testable import FerryCLI

/// `ferry hash`: its lines in `sha256sum`'s shape and its chunk-size check (the digests themselves are checked
/// against Python by `HashCommandTests` of the integration tests, with the real binary).
@Suite struct HashCommandLineTests {
    static let digest = [UInt8](repeating: 0xAB, count: 31) + [0x01]
    static let hex = String(repeating: "ab", count: 31) + "01"

    @Test func linesHaveTheShapeOfSha256sum() {
        #expect(HashCommand.line(digest: Self.digest, file: "photo.jpg") == Self.hex + "  photo.jpg")
        // A backslash or a newline in the name: the line starts with a backslash and both are escaped.
        #expect(HashCommand.line(digest: Self.digest, file: "a\\b\nc") == "\\" + Self.hex + "  a\\\\b\\nc")
        // Review: an ESC, CR, TAB or bidi control went to the terminal raw. Each is shown as ferry shows a name from a
        // peer, and the line is marked as escaped; a CR LF pair (one Character) too.
        #expect(
            HashCommand.line(digest: Self.digest, file: "a\u{1B}[2Jb\rc\td\u{202E}gpj.exe")
                == "\\" + Self.hex + "  a\\u{1B}[2Jb\\u{D}c\\u{9}d\\u{202E}gpj.exe")
        #expect(HashCommand.line(digest: Self.digest, file: "x\r\ny") == "\\" + Self.hex + "  x\\u{D}\\ny")
        #expect(HashCommand.line(digest: Self.digest, file: "写真.jpg") == Self.hex + "  写真.jpg")
    }

    @Test func aChunkSizeOutsideTheOfferRangeIsAUsageError() async {
        let run = await FerryRun.run(["hash", "--chunk-size", "1000", "x"])
        #expect(run.code == .usage)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("--chunk-size: 1000 is not between 65536 and 4194304 bytes"), "\(run.stderr)")
        let missing = await FerryRun.run(["hash"])
        #expect(missing.code == .usage, "\(missing.stderr)")
    }
}
