import FerryTestSupport
import Glibc
import Testing

@testable import FerrySystem

/// RegularFile: positional reads and writes, sizes, permissions and times.
@Suite("RegularFile")
struct FilesRegularFileTests {
    @Test func positionalWritesAndReads() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            let file = try directory.createFile("data", exclusive: true)
            defer { file.close() }
            let bytes = patternBytes(count: 300_000, seed: 7)
            try file.write(bytes[100_000...], at: 100_000)  // out of order: the second part first
            try file.write(Array(bytes[..<100_000]), at: 0)
            #expect(try file.status().size == 300_000)
            #expect(try file.read(count: 300_000, at: 0) == bytes)
            #expect(try file.read(count: 10, at: 299_995) == Array(bytes[299_995...]))  // short at the end
            #expect(try file.read(count: 10, at: 400_000) == [])
            #expect(try file.read(count: 0, at: 0) == [])
            try bytes.withUnsafeBytes { buffer in try file.write(buffer, at: 400_000) }
            #expect(try file.status().size == 700_000)
            #expect(try file.read(count: 4, at: 350_000) == [0, 0, 0, 0])  // the hole reads as zeros
            try file.truncate(to: 5)
            #expect(try file.read(count: 100, at: 0) == Array(bytes[..<5]))
            try file.sync(dataOnly: true)
            try file.sync(dataOnly: false)
            file.adviseSequential()
            #expect(try contents(root + "/data") == Array(bytes[..<5]))
        }
    }

    @Test func concurrentReadersShareOneFile() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let bytes = patternBytes(count: 1 << 20, seed: 3)
            try writeFile(root + "/big", bytes)
            let file = try RegularFile.open(path: root + "/big")
            defer { file.close() }
            file.adviseSequential()
            let chunk = 1 << 16
            try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                for index in 0..<16 {
                    group.addTask { (index, try file.read(count: chunk, at: UInt64(index * chunk))) }
                }
                for try await (index, read) in group {
                    #expect(read == Array(bytes[(index * chunk)..<((index + 1) * chunk)]))
                }
            }
        }
    }

    @Test func offsetsThatDoNotFitFailWithEINVAL() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let file = try DirectoryHandle.open(path: root, createIfMissing: false).createFile("f", exclusive: true)
            #expect(systemError { _ = try file.read(count: 1, at: UInt64.max) }?.errno == .invalidArgument)
            #expect(systemError { _ = try file.read(count: 2, at: UInt64(Int64.max)) }?.errno == .invalidArgument)
            #expect(systemError { _ = try file.read(count: -1, at: 0) }?.errno == .invalidArgument)
            #expect(systemError { try file.write([1], at: UInt64.max) }?.errno == .invalidArgument)
            #expect(systemError { try file.truncate(to: UInt64.max) }?.errno == .invalidArgument)
            #expect(
                systemError { try file.setModificationTime(seconds: 0, nanoseconds: 1_000_000_000) }?.errno
                    == .invalidArgument)
        }
    }

    @Test func permissionsNeverKeepSpecialBits() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let file = try DirectoryHandle.open(path: root, createIfMissing: false).createFile("f", exclusive: true)
            try file.setPermissions(0o4755)
            #expect(try file.status().permissions == 0o755)
            try file.setPermissions(0o7640)
            #expect(try file.status().permissions == 0o640)
        }
    }

    @Test(arguments: [
        FileTimestamp(seconds: 1_600_000_000, nanoseconds: 123_456_789),
        FileTimestamp(seconds: 0, nanoseconds: 0),
        FileTimestamp(seconds: -86_400, nanoseconds: 999_999_999),
    ])
    func modificationTimeIsRestoredExactly(_ time: FileTimestamp) async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            let directory = try DirectoryHandle.open(path: root, createIfMissing: false)
            let file = try directory.createFile("f", exclusive: true)
            try file.setModificationTime(seconds: time.seconds, nanoseconds: time.nanoseconds)
            #expect(try file.status().modificationTime == time)
            #expect(try directory.status(of: "f")?.modificationTime == time)
        }
    }

    @Test func openFollowsTheUsersSymlinkAndNamesTheFileInErrors() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            try writeFile(root + "/real", [9, 8, 7])
            #expect(symlink(root + "/real", root + "/link") == 0)
            let file = try RegularFile.open(path: root + "/link")
            #expect(try file.read(count: 3, at: 0) == [9, 8, 7])
            #expect(try file.status().kind == .regular)
            let readOnly = systemError { try file.write([1], at: 0) }
            #expect(readOnly?.errno == .badFileDescriptor)
            #expect(readOnly?.description.hasPrefix("pwrite() on \(root)/link: ") == true)
            file.close()
            file.close()
            #expect(systemError { _ = try file.status() }?.errno == .badFileDescriptor)
            let missing = systemError { _ = try RegularFile.open(path: root + "/missing") }
            #expect(missing?.description == "open(\"\(root)/missing\"): No such file or directory")
            #expect(systemError { _ = try RegularFile.open(path: root) }?.errno == .invalidArgument)
        }
    }

    /// Opening (by path, or created or opened in a directory) leaves the descriptor blocking again, with the access
    /// mode it was opened with, and `statusAtOpen` is the file's status as `fstat` gives it right after the open.
    @Test func openedFilesAreBlockingAndKeepTheirStatusAtOpen() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
            let root = directory.path
            try writeFile(root + "/existing", [1, 2, 3, 4])
            try writeFile(root + "/other", [5])
            let handle = try DirectoryHandle.open(path: root, createIfMissing: false)
            defer { handle.close() }
            let files = [
                (try RegularFile.open(path: root + "/existing"), O_RDONLY),
                (try handle.openFile("other", writable: true), O_RDWR),
                (try handle.createFile("created", exclusive: true, writable: false), O_RDONLY),
                (try handle.createFile("created2", exclusive: false), O_RDWR),
            ]
            for (file, mode) in files {
                defer { file.close() }
                let flags = try #require(descriptorFlags(of: file))
                #expect(flags & O_NONBLOCK == 0, "\(file.path) still non-blocking")
                #expect(flags & O_ACCMODE == mode, "\(file.path) opened with the wrong access mode")
                let now = try file.status()
                #expect(file.statusAtOpen.kind == .regular)
                #expect(file.statusAtOpen.inode == now.inode && file.statusAtOpen.device == now.device)
                #expect(file.statusAtOpen.size == now.size)
            }
            #expect(files[0].0.statusAtOpen.size == 4)
        }
    }
}

/// The status flags (`F_GETFL`) of the descriptor `file` holds: the test finds it by its inode among this
/// process's open descriptors (`RegularFile` does not hand out its descriptor).
private func descriptorFlags(of file: RegularFile) -> Int32? {
    let wanted = file.statusAtOpen
    for descriptor in Int32(3)..<Int32(1024) {
        var status = stat()
        guard fstat(descriptor, &status) == 0, UInt64(status.st_ino) == wanted.inode,
            UInt64(status.st_dev) == wanted.device
        else { continue }
        return fcntl(descriptor, F_GETFL)
    }
    return nil
}

/// RegularFile's direct writes: the whole aligned blocks of a write bypass the page cache, the rest is written
/// buffered, and the file reads back as written either way.
@Suite("RegularFile direct writes")
struct FilesDirectWritesTests {
    /// A file system that reports direct-I/O alignment (ext4, xfs...): the aligned prefix of each write goes direct and
    /// so is not in the page cache afterwards; a partial last block, and a write at an unaligned offset, go buffered.
    @Test func alignedBlocksBypassThePageCacheAndTheRestIsBuffered() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-direct") { directory in
            let root = directory.path
            let handle = try DirectoryHandle.open(path: root, createIfMissing: false)
            let file = try handle.createFile("data", exclusive: true)
            defer { file.close() }
            guard file.enableDirectWrites() else {
                try Test.cancel("the temporary directory's file system reports no direct-I/O alignment")
            }
            #expect(file.writesDirectly)
            #expect(file.enableDirectWrites())  // a second call keeps the first open
            let mib = 1 << 20
            let bytes = patternBytes(count: 3 * mib + 1000, seed: 11)
            try file.write(bytes[..<(2 * mib + 700)], at: 0)  // two MiB direct, 700 bytes buffered
            try file.write(Array(bytes[(2 * mib + 700)...]), at: UInt64(2 * mib + 700))  // unaligned offset: buffered
            if !file.writesDirectly {
                try Test.cancel("the file system refused a direct write that statx said it takes (written buffered)")
            }
            #expect(try PageCache.residentBytes(path: root + "/data", in: 0..<(2 * mib)).resident == 0)
            #expect(try PageCache.residentBytes(path: root + "/data", in: (2 * mib)..<(3 * mib)).resident > 0)
            try file.sync(dataOnly: true)
            #expect(try file.status().size == UInt64(bytes.count))
            #expect(try file.read(count: bytes.count, at: 0) == bytes)
            #expect(try contents(root + "/data") == bytes)
        }
    }

    /// A direct write is copied into a buffer that can be one transparent huge page: aligned to 2 MiB and advised
    /// MADV_HUGEPAGE (its mapping's VmFlags in /proc/self/smaps say `hg`), so a chunk's write is one run of
    /// contiguous memory, one segment and one request to the disk instead of two (DirectWrites.bounceBuffer).
    @Test func directWritesGoThroughABufferThatCanBeOneHugePage() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-direct") { directory in
            let handle = try DirectoryHandle.open(path: directory.path, createIfMissing: false)
            let file = try handle.createFile("data", exclusive: true)
            defer { file.close() }
            guard file.enableDirectWrites() else {
                try Test.cancel("the temporary directory's file system reports no direct-I/O alignment")
            }
            if access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0 {
                try Test.cancel("the kernel has no transparent huge pages (MADV_HUGEPAGE is refused)")
            }
            try file.write(patternBytes(count: 1 << 20, seed: 12), at: 0)
            let address = try #require(file.directBufferAddress)
            let start = UInt(bitPattern: address)
            #expect(start % UInt(2 << 20) == 0, "buffer at \(String(start, radix: 16))")
            let flags = try Self.mappingFlags(containing: start)
            #expect(flags.contains("hg"), "VmFlags of the buffer's mapping: \(flags)")
        }
    }

    /// The VmFlags of the mapping of this process that contains `address` (/proc/self/smaps).
    static func mappingFlags(containing address: UInt) throws -> [String] {
        // read(2) to the end: /proc files report a size of 0, so nothing may stop at the size `stat` gives.
        let descriptor = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(call: "open /proc/self/smaps", errno: .noSuchFileOrDirectory) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while case let count = read(descriptor, &block, block.count), count > 0 { bytes += block[..<count] }
        let smaps = String(decoding: bytes, as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && (bounds[0]..<bounds[1]).contains(address)
            } else if inside, fields.first == "VmFlags:" {
                return fields.dropFirst().map(String.init)
            }
        }
        throw SystemError(call: "no mapping contains \(String(address, radix: 16))", errno: .invalidArgument)
    }

    /// Closing closes the second open too: a write after `close()` fails with EBADF as before, direct or not.
    @Test func closingEndsDirectWrites() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-direct") { directory in
            let handle = try DirectoryHandle.open(path: directory.path, createIfMissing: false)
            let file = try handle.createFile("data", exclusive: true)
            let enabled = file.enableDirectWrites()
            file.close()
            #expect(!file.writesDirectly)
            #expect(!file.enableDirectWrites())
            let block = [UInt8](repeating: 1, count: 1 << 20)
            let error = #expect(throws: SystemError.self) { try file.write(block, at: 0) }
            #expect(error?.errno == .badFileDescriptor, "direct writes were enabled: \(enabled)")
        }
    }
}
