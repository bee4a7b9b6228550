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

    /// A name that is not valid UTF-8 cannot travel (names are UTF-8 on the wire): it is reported as skipped, with
    /// U+FFFD for its bad bytes, never left out silently; the rest of the folder is sent.
    @Test func aNameThatIsNotUTF8IsSkippedAndNamed() throws {
        let root = try TemporaryDirectory(prefix: "ferry-undecodable")
        defer { root.remove() }
        let album = root.path + "/album"
        try FileManager.default.createDirectory(atPath: album + "/inner", withIntermediateDirectories: true)
        try Data("ok".utf8).write(to: URL(fileURLWithPath: album + "/ok.txt"))
        // "caf\xE9.jpg": Latin-1, as an old camera or archive might write it.
        let bytes: [UInt8] = Array((album + "/inner/caf").utf8) + [0xE9] + Array(".jpg".utf8) + [0]
        let descriptor = bytes.withUnsafeBufferPointer {
            $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600) }
        }
        try #require(descriptor >= 0)
        close(descriptor)
        var skipped: [SourceFile.Skipped] = []
        let files = try SourceFile.collect([album], skipped: &skipped)
        #expect(files.map(\.name) == ["album/ok.txt"])
        #expect(skipped == [SourceFile.Skipped(name: "album/inner/caf\u{FFFD}.jpg", kind: .undecodableName)])
    }

    /// A folder named through a symbolic link is sent under the link's name (the user named it), its files found
    /// through the link; links inside it are still skipped, never followed.
    @Test func aFolderNamedThroughALinkIsSentWhole() throws {
        let root = try TemporaryDirectory(prefix: "ferry-linked")
        defer { root.remove() }
        let real = root.path + "/real"
        try FileManager.default.createDirectory(atPath: real + "/a/b", withIntermediateDirectories: true)
        try Data("1".utf8).write(to: URL(fileURLWithPath: real + "/a/b/one.txt"))
        try Data("2".utf8).write(to: URL(fileURLWithPath: real + "/two.txt"))
        try FileManager.default.createSymbolicLink(atPath: real + "/a/up", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: root.path + "/shortcut", withDestinationPath: "real")
        var skipped: [SourceFile.Skipped] = []
        let files = try SourceFile.collect([root.path + "/shortcut"], skipped: &skipped)
        #expect(files.map(\.name) == ["shortcut/a/b/one.txt", "shortcut/two.txt"])
        #expect(files.map(\.path) == [root.path + "/shortcut/a/b/one.txt", root.path + "/shortcut/two.txt"])
        #expect(skipped == [SourceFile.Skipped(name: "shortcut/a/up", kind: .symbolicLink)])
        // With a trailing slash: the same files, the same paths (no "shortcut//a").
        #expect(try SourceFile.collect([root.path + "/shortcut/"]) == files)
    }
}
