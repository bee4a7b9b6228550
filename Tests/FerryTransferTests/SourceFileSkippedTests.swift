import Foundation
import FerryTestSupport
import Testing

@testable import FerryTransfer

/// Issue 13: a folder sent whole skips symbolic links and special files, and `collect(_:skipped:)` names each.
@Suite struct SourceFileSkippedTests {
    @Test func linksAndSpecialFilesInAFolderAreSkippedAndNamed() throws {
        let root = try TemporaryDirectory(prefix: "ferry-skipped")
        defer { root.remove() }
        let album = root.path + "/album"
        try FileManager.default.createDirectory(atPath: album + "/inner", withIntermediateDirectories: true)
        try Data("photo".utf8).write(to: URL(fileURLWithPath: album + "/photo.jpg"))
        try Data("deep".utf8).write(to: URL(fileURLWithPath: album + "/inner/deep.txt"))
        try FileManager.default.createSymbolicLink(atPath: album + "/link.jpg", withDestinationPath: "photo.jpg")
        try FileManager.default.createSymbolicLink(atPath: album + "/inner/away", withDestinationPath: "/etc")
        #expect(mkfifo(album + "/pipe", 0o600) == 0)
        var skipped: [SourceFile.Skipped] = []
        let files = try SourceFile.collect([album], skipped: &skipped)
        #expect(files.map(\.name) == ["album/inner/deep.txt", "album/photo.jpg"])
        #expect(
            skipped == [
                SourceFile.Skipped(name: "album/inner/away", kind: .symbolicLink),
                SourceFile.Skipped(name: "album/link.jpg", kind: .symbolicLink),
                SourceFile.Skipped(name: "album/pipe", kind: .special),
            ])
        // The plain form skips the same, silently.
        #expect(try SourceFile.collect([album]) == files)
    }
}
