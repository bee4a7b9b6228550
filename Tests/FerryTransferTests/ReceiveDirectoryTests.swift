import FerryStateMachines
import FerrySystem
import FerryTestSupport
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// ReceiveDirectory: staging, resume, and publishing that never overwrites and never leaves the directory.
@Suite struct ReceiveDirectoryTests {
    static func key(_ n: Int) -> String {
        String(repeating: "0", count: 62) + String(format: "%02x", n)
    }

    /// Stages `bytes` under `key` and closes the staged file.
    func stage(_ directory: ReceiveDirectory, _ key: String, _ bytes: [UInt8] = Array("payload".utf8)) throws {
        let (file, existing) = try directory.stagedFile(key: key)
        defer { file.close() }
        #expect(existing == 0)
        try file.write(bytes, at: 0)
    }

    func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func status(_ path: String) -> stat? {
        var buffer = stat()
        return lstat(path, &buffer) == 0 ? buffer : nil
    }

    @Test func publishCreatesTheTreeAndEmptiesStaging() async throws {
        try await TemporaryDirectory.with { temporary in
            let path = temporary.path + "/inbox"
            let directory = try ReceiveDirectory(path: path)
            #expect(status(path + "/.ferry-staging").map { $0.st_mode & 0o777 } == 0o700)
            try stage(directory, Self.key(1), [1, 2, 3])
            let name = try directory.publish(
                key: Self.key(1), components: ["a", "b", "c.txt"], permissions: 0o644, modificationTime: (0, 0))
            #expect(name == "a/b/c.txt")
            #expect(try contents(path + "/a/b/c.txt") == [1, 2, 3])
            #expect(directory.stagedLength(key: Self.key(1)) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: path + "/.ferry-staging").isEmpty)
        }
    }

    @Test func takenNamesGetNumberedVariants() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            try Data([9]).write(to: URL(fileURLWithPath: temporary.path + "/photo.jpg"))
            var names: [String] = []
            for index in 1...2 {
                try stage(directory, Self.key(index), [UInt8(index)])
                names.append(
                    try directory.publish(
                        key: Self.key(index), components: ["photo.jpg"], permissions: 0o644, modificationTime: (0, 0)))
            }
            #expect(names == ["photo (1).jpg", "photo (2).jpg"])
            #expect(try contents(temporary.path + "/photo.jpg") == [9])
            #expect(try contents(temporary.path + "/photo (1).jpg") == [1])
            #expect(try contents(temporary.path + "/photo (2).jpg") == [2])
        }
    }

    @Test func aPlantedSymlinkIsRefusedNeverFollowed() async throws {
        try await TemporaryDirectory.with { temporary in
            try await TemporaryDirectory.with(prefix: "ferry-elsewhere") { elsewhere in
                let directory = try ReceiveDirectory(path: temporary.path)
                #expect(symlink(elsewhere.path, temporary.path + "/sub") == 0)
                try stage(directory, Self.key(1))
                let error = #expect(throws: SystemError.self) {
                    _ = try directory.publish(
                        key: Self.key(1), components: ["sub", "x.txt"], permissions: 0o644, modificationTime: (0, 0))
                }
                #expect(error?.errno == .notDirectory || error?.errno == .tooManySymbolicLinkLevels)
                #expect(error?.description.contains("symbolic link") == true)
                #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
                #expect(directory.stagedLength(key: Self.key(1)) == 7)  // still staged, nothing lost

                try Data([1]).write(to: URL(fileURLWithPath: temporary.path + "/file"))
                let notDirectory = #expect(throws: SystemError.self) {
                    _ = try directory.publish(
                        key: Self.key(1), components: ["file", "x.txt"], permissions: 0o644, modificationTime: (0, 0))
                }
                #expect(notDirectory?.errno == .notDirectory)
            }
        }
    }

    @Test func aSymlinkedStagingFolderIsRefused() async throws {
        try await TemporaryDirectory.with { temporary in
            try await TemporaryDirectory.with(prefix: "ferry-elsewhere") { elsewhere in
                #expect(symlink(elsewhere.path, temporary.path + "/.ferry-staging") == 0)
                let error = #expect(throws: SystemError.self) { _ = try ReceiveDirectory(path: temporary.path) }
                #expect(error?.errno == .notDirectory || error?.errno == .tooManySymbolicLinkLevels)
                let missingParent = #expect(throws: SystemError.self) {
                    _ = try ReceiveDirectory(path: temporary.path + "/no/such")
                }
                #expect(missingParent?.errno == .noSuchFileOrDirectory)
            }
        }
    }

    @Test(arguments: [["..", "x"], [".ferry-staging", "x"], ["a/b"], [], ["a", ""], ["x\u{202E}gpj.exe"]])
    func invalidNamesAreRefused(_ components: [String]) async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            try stage(directory, Self.key(1))
            let error = #expect(throws: SystemError.self) {
                _ = try directory.publish(
                    key: Self.key(1), components: components, permissions: 0o644, modificationTime: (0, 0))
            }
            #expect(error?.errno == .invalidArgument)
            #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [".ferry-staging"])
        }
    }

    @Test func invalidKeysAreRefused() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            for key in ["", "../x", String(repeating: "A", count: 64), String(repeating: "0", count: 63)] {
                #expect(throws: SystemError.self) { _ = try directory.stagedFile(key: key) }
                #expect(directory.stagedLength(key: key) == nil)
                directory.removeStaged(key: key)
            }
        }
    }

    @Test func stagingSurvivesAReopen() async throws {
        try await TemporaryDirectory.with { temporary in
            let first = try ReceiveDirectory(path: temporary.path)
            try stage(first, Self.key(5), [UInt8](repeating: 7, count: 1000))
            first.close()
            let second = try ReceiveDirectory(path: temporary.path)
            #expect(second.stagedLength(key: Self.key(5)) == 1000)
            let (file, existing) = try second.stagedFile(key: Self.key(5))
            defer { file.close() }
            #expect(existing == 1000)
            #expect(try file.read(count: 2000, at: 0) == [UInt8](repeating: 7, count: 1000))
            second.removeStaged(key: Self.key(5))
            second.removeStaged(key: Self.key(5))  // already gone: ignored
            #expect(second.stagedLength(key: Self.key(5)) == nil)
        }
    }

    @Test func staleStagedFilesAreRemoved() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            try stage(directory, Self.key(1))
            try stage(directory, Self.key(2))
            let (old, _) = try directory.stagedFile(key: Self.key(1))
            let eightDaysAgo = Int64(Date().timeIntervalSince1970) - 8 * 24 * 3600
            try old.setModificationTime(seconds: eightDaysAgo, nanoseconds: 0)
            old.close()
            try Data([1]).write(to: URL(fileURLWithPath: temporary.path + "/.ferry-staging/not-a-key"))
            #expect(directory.removeStale() == 1)
            #expect(directory.stagedLength(key: Self.key(1)) == nil)
            #expect(directory.stagedLength(key: Self.key(2)) == 7)
            #expect(directory.removeStale(olderThan: .seconds(3600), now: Date() + 7200) == 1)
            #expect(status(temporary.path + "/.ferry-staging/not-a-key") != nil)
        }
    }

    @Test func permissionsLoseSpecialBitsAndTheTimeIsRestored() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            try stage(directory, Self.key(1))
            let name = try directory.publish(
                key: Self.key(1), components: ["tool"], permissions: 0o4755,
                modificationTime: (1_600_000_000, 123_456_789))
            let published = try #require(status(temporary.path + "/" + name))
            #expect(published.st_mode & 0o7777 == 0o755)
            #expect(published.st_mtim.tv_sec == 1_600_000_000 && published.st_mtim.tv_nsec == 123_456_789)
            // Never writable by group or others, whatever the sender offered (SECURITY.md).
            try stage(directory, Self.key(2))
            let open = try directory.publish(
                key: Self.key(2), components: ["open"], permissions: 0o6777, modificationTime: (1_600_000_000, 0))
            let opened = try #require(status(temporary.path + "/" + open))
            #expect(opened.st_mode & 0o7777 == 0o755, "\(String(opened.st_mode & 0o7777, radix: 8))")
        }
    }

    @Test func concurrentPublishesOfOneNameNeverOverwrite() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            let count = 12
            for index in 0..<count { try stage(directory, Self.key(index), [UInt8(index)]) }
            let names = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<count {
                    group.addTask {
                        let name = try directory.publish(
                            key: Self.key(index), components: ["same", "name.txt"], permissions: 0o644,
                            modificationTime: (0, 0))
                        return (index, name)
                    }
                }
                return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
            }
            #expect(Set(names.values).count == count)
            #expect(names.values.contains("same/name.txt"))
            for (index, name) in names { #expect(try contents(temporary.path + "/" + name) == [UInt8(index)]) }
        }
    }

    @Test func syncAndSpace() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            let one = try directory.stagedFile(key: Self.key(1)).file
            let two = try directory.stagedFile(key: Self.key(2)).file
            #expect(try directory.syncBeforePublish([]).isEmpty)
            #expect(try directory.syncBeforePublish([one]).isEmpty)
            #expect(try directory.syncBeforePublish([one, two]).isEmpty, "no file's own writeback failed")
            #expect((directory.availableBytes() ?? 0) > 0)
        }
    }

    @Test(arguments: [
        ("photo.jpg", 1, "photo (1).jpg"),
        ("archive.tar.gz", 2, "archive.tar (2).gz"),
        (".bashrc", 1, ".bashrc (1)"),
        (".config.json", 1, ".config (1).json"),
        ("README", 9999, "README (9999)"),
        ("name.", 1, "name (1)."),
    ])
    func numberedNames(_ name: String, _ variant: Int, _ expected: String) {
        #expect(ReceiveDirectory.numberedName(name, variant) == expected)
    }

    @Test func numberedNamesStayWithin255Bytes() {
        let long = String(repeating: "é", count: 120) + ".jpeg"  // 245 bytes
        let numbered = ReceiveDirectory.numberedName(long, 9999)
        #expect(numbered.utf8.count <= 255 && numbered.hasSuffix(" (9999).jpeg"))
        let longExtension = "a." + String(repeating: "x", count: 252)
        let other = ReceiveDirectory.numberedName(longExtension, 12)
        #expect(other.utf8.count <= 255 && other.hasSuffix(" (12)"))
        #expect(NameValidator.components(of: numbered).map(\.count) == .success(1))
        #expect(NameValidator.components(of: other).map(\.count) == .success(1))
    }
}
