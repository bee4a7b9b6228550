import FerryTestSupport
import Foundation
import Glibc
import Testing

@testable import FerrySystem

/// DirectoryHandle: every operation stays inside the directory and never follows a symlink by name.
@Suite("DirectoryHandle")
struct FilesDirectoryTests {
    @Test func openCreatesOnlyTheLastComponent() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root + "/inbox", createIfMissing: true)
            defer { directory.close() }
            #expect(
                try DirectoryHandle.open(path: root, createIfMissing: false).status(of: "inbox")?.kind == .directory)
            let error = systemError { _ = try DirectoryHandle.open(path: root + "/a/b", createIfMissing: true) }
            #expect(error?.errno == .noSuchFileOrDirectory)
            #expect(error?.description.contains("parent directory must exist") == true)
            let missing = systemError { _ = try DirectoryHandle.open(path: root + "/nope", createIfMissing: false) }
            #expect(missing?.errno == .noSuchFileOrDirectory)
            #expect(!exists(root + "/nope"))
        }
    }

    @Test func openRefusesASymlinkAndAFile() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            #expect(mkdir(root + "/real", 0o755) == 0)
            #expect(symlink(root + "/real", root + "/link") == 0)
            try writeFile(root + "/file")
            let link = systemError { _ = try DirectoryHandle.open(path: root + "/link", createIfMissing: true) }
            #expect(link?.errno == .notDirectory || link?.errno == .tooManySymbolicLinkLevels)
            #expect(link?.description.contains("a symbolic link, never followed") == true)
            let file = systemError { _ = try DirectoryHandle.open(path: root + "/file", createIfMissing: false) }
            #expect(file?.errno == .notDirectory)
        }
    }

    @Test func subdirectoryCreatesOpensAndRefusesSymlinks() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            let sub = try directory.subdirectory("sub", create: true, permissions: 0o700)
            #expect(sub.path == root + "/sub")
            #expect(try directory.status(of: "sub")?.permissions == 0o700)
            _ = try directory.subdirectory("sub", create: true)  // exists already: opened
            #expect(
                systemError { _ = try directory.subdirectory("missing", create: false) }?.errno
                    == .noSuchFileOrDirectory)

            #expect(mkdir(root + "/elsewhere", 0o755) == 0)
            #expect(symlink(root + "/elsewhere", root + "/link") == 0)
            let link = systemError { _ = try directory.subdirectory("link", create: true) }
            #expect(link?.errno == .notDirectory || link?.errno == .tooManySymbolicLinkLevels)
            #expect(link?.description.contains("a symbolic link, never followed") == true)
            try writeFile(root + "/file")
            let file = systemError { _ = try directory.subdirectory("file", create: true) }
            #expect(file?.errno == .notDirectory)
            #expect(file?.description == "openat(\"file\") in \(root): Not a directory")
        }
    }

    @Test(arguments: ["", ".", "..", "a/b", "/etc", "..\u{0}x", "x\u{0}"])
    func namesThatAreNotOneComponentFailWithEINVAL(_ name: String) async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            #expect(systemError { _ = try directory.subdirectory(name, create: true) }?.errno == .invalidArgument)
            #expect(systemError { _ = try directory.createFile(name, exclusive: false) }?.errno == .invalidArgument)
            #expect(systemError { _ = try directory.openFile(name, writable: false) }?.errno == .invalidArgument)
            #expect(systemError { try directory.removeFile(name) }?.errno == .invalidArgument)
            #expect(systemError { try directory.removeDirectory(name) }?.errno == .invalidArgument)
            #expect(systemError { _ = try directory.status(of: name) }?.errno == .invalidArgument)
            #expect(
                systemError { try directory.rename("x", to: directory, as: name, replace: true) }?.errno
                    == .invalidArgument)
            #expect(try directory.entries().isEmpty)
        }
    }

    /// Names made only partly of dots, or of dots and other bytes, are one component each: created, found, removed.
    @Test(arguments: ["...", ".a", "..a", "a..", ".ferry", "é.jpg", "x"])
    func oddNamesThatAreOneComponentWork(_ name: String) async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            #expect(CallDescription.isSingleComponent(name))
            try directory.createFile(name, exclusive: true).close()
            #expect(try directory.status(of: name)?.kind == .regular)
            try directory.removeFile(name)
            #expect(try directory.entries().isEmpty)
        }
    }

    @Test func createFileIsExclusiveOnRequestAndNeverFollowsASymlink() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            let file = try directory.createFile("a.bin", exclusive: true)
            file.close()
            #expect(try directory.status(of: "a.bin")?.permissions == 0o600)
            #expect(systemError { _ = try directory.createFile("a.bin", exclusive: true) }?.errno == .fileExists)
            _ = try directory.createFile("a.bin", exclusive: false)

            #expect(symlink(root + "/target", root + "/dangling") == 0)
            let dangling = systemError { _ = try directory.createFile("dangling", exclusive: false) }
            #expect(dangling?.errno == .tooManySymbolicLinkLevels)
            #expect(!exists(root + "/target"))
            try writeFile(root + "/target", [1, 2, 3])
            #expect(symlink(root + "/target", root + "/link") == 0)
            #expect(
                systemError { _ = try directory.openFile("link", writable: true) }?.errno
                    == .tooManySymbolicLinkLevels)
            #expect(try contents(root + "/target") == [1, 2, 3])
        }
    }

    /// `createLockedLinkedFile`: the name holds the new file, already locked through a read-only descriptor of its
    /// own (another open of the name cannot lock it, and can once that descriptor is closed), written through the
    /// other descriptor; a taken name is never replaced, symlinks included.
    @Test func aLockedLinkedFileIsLockedWhenItsNameAppearsAndNeverReplacesOne() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            defer { directory.close() }
            guard
                case .created(let writable, let lock) = try directory.createLockedLinkedFile(
                    "a.bin", permissions: 0o600)
            else {
                Issue.record("O_TMPFILE and /proc are available here: the file is created without a name")
                return
            }
            let named = try #require(try directory.status(of: "a.bin"))
            #expect(named.kind == .regular && named.permissions == 0o600 && named.size == 0)
            #expect(lock.statusAtOpen.inode == named.inode && writable.statusAtOpen.inode == named.inode)
            let other = try directory.openFile("a.bin", writable: false)
            #expect(try other.tryLock() == false)
            try writable.write([1, 2, 3], at: 0)
            writable.close()
            #expect(try contents(root + "/a.bin") == [1, 2, 3])
            #expect(try other.tryLock() == false)  // the lock is the read-only descriptor's, not the writer's
            lock.close()
            #expect(try other.tryLock())
            other.close()

            guard case .exists = try directory.createLockedLinkedFile("a.bin", permissions: 0o600) else {
                Issue.record("a taken name is never replaced")
                return
            }
            #expect(symlink(root + "/target", root + "/dangling") == 0)
            guard case .exists = try directory.createLockedLinkedFile("dangling", permissions: 0o600) else {
                Issue.record("a symlink's name is taken too")
                return
            }
            #expect(!exists(root + "/target"))
            #expect(try contents(root + "/a.bin") == [1, 2, 3])
        }
    }

    @Test func specialFilesAreRefusedWithoutBlocking() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            #expect(mkfifo(root + "/fifo", 0o600) == 0)
            let error = systemError { _ = try directory.openFile("fifo", writable: false) }
            #expect(error?.errno == .invalidArgument)
            #expect(error?.description.contains("not a regular file") == true)
            #expect(systemError { _ = try RegularFile.open(path: root + "/fifo") }?.errno == .invalidArgument)
            #expect(
                systemError { _ = try directory.openFile("missing", writable: false) }?.description
                    == "openat(\"missing\") in \(root): No such file or directory")
        }
    }

    @Test func renameRefusesToReplaceUnlessAsked() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            let other = try directory.subdirectory("other", create: true)
            try writeFile(root + "/a", [1])
            try writeFile(root + "/other/b", [2])
            let taken = systemError { try directory.rename("a", to: other, as: "b", replace: false) }
            #expect(taken?.errno == .fileExists)
            #expect(taken?.description.hasPrefix("renameat2(\"a\" in \(root), \"b\" in \(root)/other)") == true)
            #expect(try contents(root + "/other/b") == [2])
            try directory.rename("a", to: other, as: "c", replace: false)
            #expect(try contents(root + "/other/c") == [1])
            try other.rename("c", to: other, as: "b", replace: true)
            #expect(try contents(root + "/other/b") == [1])
            #expect(try other.entries() == ["b"])
        }
    }

    @Test func entriesStatusAndRemoval() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            try writeFile(root + "/one")
            try writeFile(root + "/Zoë ✓.txt", [1, 2, 3, 4])
            #expect(mkdir(root + "/dir", 0o755) == 0)
            #expect(symlink("/nonexistent", root + "/link") == 0)
            let expected: Set = ["one", "Zoë ✓.txt", "dir", "link"]
            #expect(Set(try directory.entries()) == expected)
            #expect(Set(try directory.entries()) == expected)  // a second listing starts from the beginning too

            let status = try #require(try directory.status(of: "Zoë ✓.txt"))
            #expect(status.kind == .regular && status.size == 4)
            #expect(try directory.status(of: "dir")?.kind == .directory)
            #expect(try directory.status(of: "link")?.kind == .symlink)
            #expect(try directory.status(of: "missing") == nil)

            try directory.removeFile("link")
            try directory.removeFile("one")
            try directory.removeDirectory("dir")
            #expect(systemError { try directory.removeFile("one") }?.errno == .noSuchFileOrDirectory)
            #expect(try directory.entries() == ["Zoë ✓.txt"])
            #expect(!exists("/nonexistent"))
        }
    }

    @Test func syncSpaceAndClose() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            try directory.sync()
            try directory.syncFileSystem()
            #expect(try directory.availableBytes() > 0)
            directory.close()
            directory.close()
            let closed = systemError { _ = try directory.entries() }
            #expect(closed?.errno == .badFileDescriptor)
        }
    }
}
