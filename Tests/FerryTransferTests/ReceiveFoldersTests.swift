import FerryStateMachines
import FerrySystem
import FerryTestSupport
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// `ReceiveDirectory.createFolders`: the folders of an offer's folders section (PROTOCOL.md 11.3) are created inside
/// the receive directory only, by the rules a file's name meets, never through a symbolic link.
@Suite struct ReceiveFoldersTests {
    func isDirectory(_ path: String) -> Bool {
        var buffer = stat()
        return lstat(path, &buffer) == 0 && buffer.st_mode & S_IFMT == S_IFDIR
    }

    @Test func foldersAreCreatedWithEveryFolderOnTheirWayAndAFolderThereIsKept() async throws {
        try await TemporaryDirectory.with { temporary in
            let path = temporary.path + "/inbox"
            let directory = try ReceiveDirectory(path: path)
            defer { directory.close() }
            #expect(mkdir(path + "/album", 0o700) == 0)
            let results = directory.createFolders([["album", "empty"], ["album", "deep", "er", "est"], ["album"]])
            #expect(results.map { try? $0.get() } == ["album/empty", "album/deep/er/est", "album"])
            #expect(isDirectory(path + "/album/empty") && isDirectory(path + "/album/deep/er/est"))
            var buffer = stat()
            #expect(lstat(path + "/album", &buffer) == 0 && buffer.st_mode & 0o777 == 0o700)  // kept as it was
        }
    }

    @Test func aFolderThroughASymbolicLinkOrAFileIsNotCreatedAndNothingOutsideChanges() async throws {
        try await TemporaryDirectory.with { temporary in
            let path = temporary.path + "/inbox"
            let outside = temporary.path + "/outside"
            #expect(mkdir(outside, 0o755) == 0)
            let directory = try ReceiveDirectory(path: path)
            defer { directory.close() }
            #expect(symlink(outside, path + "/link") == 0)
            #expect(FileManager.default.createFile(atPath: path + "/file", contents: Data([1])))
            let results = directory.createFolders([["link", "x"], ["file", "y"], ["link"], ["ok"]])
            #expect((try? results[0].get()) == nil)
            #expect((try? results[1].get()) == nil)
            #expect((try? results[2].get()) == nil)
            #expect((try? results[3].get()) == "ok")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
        }
    }

    @Test(arguments: [
        ["..", "x"], ["a", "..", "..", "x"], ["/etc"], [".ferry-staging", "x"], [".FERRY-STAGING"], [],
    ])
    func aFolderNameTheValidatorRefusesIsNotCreated(_ components: [String]) async throws {
        try await TemporaryDirectory.with { temporary in
            let path = temporary.path + "/inbox"
            let directory = try ReceiveDirectory(path: path)
            defer { directory.close() }
            let results = directory.createFolders([components])
            #expect((try? results[0].get()) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == ["inbox"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == [".ferry-staging"])
        }
    }
}
