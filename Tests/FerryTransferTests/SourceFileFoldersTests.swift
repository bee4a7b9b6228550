import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The empty folders a folder sent whole offers (PROTOCOL.md 11.3 folders section): those with no file sent and no
/// subfolder, named as its files are, and no more than one offer carries.
@Suite struct SourceFileFoldersTests {
    @Test func theLeafFoldersWithoutAFileSentAreListedAndHashListsTheSame() async throws {
        try await TemporaryDirectory.with { temporary in
            let album = temporary.path + "/album"
            let manager = FileManager.default
            for folder in ["empty", "deep/er", "sub/inner", "link-only"] {
                try manager.createDirectory(atPath: album + "/" + folder, withIntermediateDirectories: true)
            }
            try Data([1]).write(to: URL(fileURLWithPath: album + "/sub/file"))
            try manager.createSymbolicLink(atPath: album + "/link-only/l", withDestinationPath: "/")
            var skipped: [SourceFile.Skipped] = []
            var folders: [String] = []
            let files = try SourceFile.collect([album], skipped: &skipped, folders: &folders)
            #expect(files.map(\.name) == ["album/sub/file"])
            #expect(folders == ["album/deep/er", "album/empty", "album/link-only", "album/sub/inner"])
            #expect(try SourceFile.folder(album).folders == folders)
        }
    }

    @Test func moreEmptyFoldersThanAnOfferCarriesAreRefusedBeforeAnythingIsSent() async throws {
        try await TemporaryDirectory.with { temporary in
            let album = temporary.path + "/album"
            try FileManager.default.createDirectory(atPath: album, withIntermediateDirectories: true)
            try Data([1]).write(to: URL(fileURLWithPath: album + "/file"))
            for index in 0...Limits.maxOfferFolders {
                #expect(mkdir(album + "/\(index)", 0o755) == 0)
            }
            var skipped: [SourceFile.Skipped] = []
            var folders: [String] = []
            #expect(throws: TransferError.tooManyFolders(Limits.maxOfferFolders + 1, limit: Limits.maxOfferFolders)) {
                try SourceFile.collect([album], skipped: &skipped, folders: &folders)
            }
        }
    }
}
