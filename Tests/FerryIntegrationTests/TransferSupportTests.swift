import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// The test support that transfer tests and `ferry-bench transfer` stand on: bit flips at chosen
    /// offsets, tmpfs mounts, generated files, directory snapshots and child resource usage.
    @Suite("Transfer test support")
    struct TransferSupportTests {
        // MARK: FaultProxy.flipBits(atOffsets:)

        @Test func flipBitsAtOffsetsDamagesExactlyThoseBytesOfEachConnection() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let offsets = [0, 5, 65_535, 65_536, 200_000, 299_999, 400_000, -3]
            let proxy = try FaultProxy(targetPort: server.port, mode: .flipBits(atOffsets: offsets))
            defer { proxy.close() }
            let sent = TestFiles.randomBytes(count: 300_000, seed: 11)
            for _ in 0..<2 {  // offsets count from 0 on every connection
                let client = try LoopbackSocket.connect(port: proxy.port)
                defer { client.close() }
                let accepted = try server.accept()
                defer { accepted.close() }
                for start in stride(from: 0, to: sent.count, by: 70_001) {  // offsets count across writes
                    try client.write(Array(sent[start..<min(start + 70_001, sent.count)]))
                }
                let received = try accepted.read(exactly: sent.count)
                let flipped = (0..<sent.count).filter { received[$0] != sent[$0] }
                #expect(flipped == [0, 5, 65_535, 65_536, 200_000, 299_999])
                #expect(flipped.allSatisfy { received[$0] ^ sent[$0] == 0x01 })
                try accepted.write(sent)
                #expect(try client.read(exactly: sent.count) == sent)  // the other direction is untouched
            }
            #expect(proxy.mode == .flipBits(atOffsets: offsets, direction: .clientToServer))
        }

        @Test func flipBitsAtOffsetsServerToClientAndOtherModesStillWork() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port, mode: .flipBits(atOffsets: [3], direction: .serverToClient))
            defer { proxy.close() }
            let client = try LoopbackSocket.connect(port: proxy.port)
            defer { client.close() }
            let accepted = try server.accept()
            defer { accepted.close() }
            try client.write([1, 2, 3, 4, 5])
            #expect(try accepted.read(exactly: 5) == [1, 2, 3, 4, 5])
            try accepted.write([1, 2, 3, 4, 5])
            #expect(try client.read(exactly: 5) == [1, 2, 3, 5, 5])
            proxy.mode = .flipBits(every: 2, direction: .serverToClient)  // stream offsets go on: 5, 7, ...
            try accepted.write([0, 0, 0, 0])
            #expect(try client.read(exactly: 4) == [1, 0, 1, 0])
            proxy.mode = .pass
            try accepted.write([9])
            #expect(try client.read(exactly: 1) == [9])
        }

        // MARK: TmpfsMount

        @Test func tmpfsMountLimitsSizeAndUnmountsIdempotently() throws {
            guard try TmpfsMount.requireAvailability() else {
                try Test.cancel("tmpfs unavailable: \(TmpfsMount.availabilityReason)")
            }
            let mount = try TmpfsMount(size: 1 << 20)
            defer { mount.unmount() }
            #expect(try mountedFileSystem(at: mount.path) == "tmpfs")
            var info = stat()
            #expect(stat(mount.path, &info) == 0 && info.st_mode & 0o777 == 0o755)
            let files = TestFiles(directory: mount.url)
            try files.random("fits.bin", size: 512 << 10)
            let error = #expect(throws: TestSupportError.self) { try files.random("too-big.bin", size: 2 << 20) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("No space left"))
            mount.unmount()
            #expect(try mountedFileSystem(at: mount.path) == nil)
            #expect(!FileManager.default.fileExists(atPath: mount.path))
            mount.unmount()
        }

        @Test func tmpfsMountBusyFallsBackToLazyUnmountAndDeinitUnmounts() throws {
            guard try TmpfsMount.requireAvailability() else {
                try Test.cancel("tmpfs unavailable: \(TmpfsMount.availabilityReason)")
            }
            var path = ""
            do {
                let mount = try TmpfsMount(size: 1 << 20)
                path = mount.path
                let url = try TestFiles(directory: mount.url).write("held.txt", bytes: Array("held".utf8))
                let fd = open(url.path, O_RDONLY | O_CLOEXEC)  // keeps the file system busy
                #expect(fd >= 0)
                defer { close(fd) }
                mount.unmount()
                #expect(try mountedFileSystem(at: path) == nil)
            }
            do {
                let dropped = try TmpfsMount(size: 1 << 20)
                path = dropped.path
            }
            #expect(try mountedFileSystem(at: path) == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
        }

        // MARK: TestFiles

        @Test func writeKeepsEveryByteOfFilesLargerThanOnePiece() throws {
            let directory = try TemporaryDirectory(prefix: "ferry-files")
            defer { directory.remove() }
            let bytes = TestFiles.randomBytes(count: (3 << 20) + 12_345, seed: 5)
            let url = try TestFiles(in: directory).write("big.bin", bytes: bytes)
            #expect(try Array(Data(contentsOf: url)) == bytes)
        }

        @Test func randomFilesAreDeterministicAndPrefixesOfLongerOnes() async throws {
            try await TemporaryDirectory.with { directory in
                let files = TestFiles(in: directory)
                let size = 3 << 20 + 5  // crosses 1 MiB pieces and ends mid-word
                let first = try files.random("a.bin", size: size, seed: 7)
                let second = try files.random("sub/b.bin", size: size, seed: 7)
                let other = try files.random("c.bin", size: size, seed: 8)
                #expect(try Data(contentsOf: first).count == size)
                #expect(try TestFiles.sha256(ofFile: first) == TestFiles.sha256(ofFile: second))
                #expect(try TestFiles.sha256(ofFile: first) != TestFiles.sha256(ofFile: other))
                #expect(try [UInt8](Data(contentsOf: first)) == TestFiles.randomBytes(count: size, seed: 7))
                #expect(
                    TestFiles.randomBytes(count: 13, seed: 7) == Array(TestFiles.randomBytes(count: 64, seed: 7)[..<13]))
                let empty = try files.random("empty.bin", size: 0)
                #expect(try Data(contentsOf: empty).isEmpty)
            }
        }

        @Test func textIsDeterministicEnglishLikeAndCompressesThreeToFiveTimes() async throws {
            try await TemporaryDirectory.with { directory in
                let size = 4 << 20 + 123
                let url = try TestFiles(in: directory).text(size: size, seed: 3)
                let bytes = try [UInt8](Data(contentsOf: url))
                #expect(bytes == TestFiles.textBytes(count: size, seed: 3))
                #expect(bytes != TestFiles.textBytes(count: size, seed: 4))
                let text = String(decoding: bytes, as: UTF8.self)
                let lines = text.split(separator: "\n")
                #expect(lines.count > size / 150)
                #expect(text.contains(". The ") || text.contains(". Of ") || text.contains(". And "))
                #expect(text.contains(",") && text.contains("?") && text.contains(where: \.isNumber))
                #expect(bytes.allSatisfy { $0 == 0x0A || (0x20..<0x7F).contains($0) })
                let (tool, range) =
                    ExecutableSearch.path(of: "zstd").map { ($0, 3.0...5.0) } ?? ("gzip", 2.5...5.5)
                let compressed = try FerryProcess.run(
                    "/bin/sh", ["-c", "\"$0\" -1 -c < \"$1\" | wc -c", tool, url.path]
                ).requireSuccess()
                let ratio = Double(size) / Double(Int(compressed.stdout.trimmingCharacters(in: .whitespaces)) ?? size)
                #expect(range.contains(ratio), "\(tool) -1 ratio \(ratio)")
            }
        }

        @Test func jpegHasTheMarkersAndDimensionsASnifferReads() async throws {
            let bytes = TestImage.jpeg(width: 641, height: 479)
            var segments: [UInt8] = []
            var size: (width: Int, height: Int)?
            var index = 2
            #expect(bytes.prefix(2) == [0xFF, 0xD8])
            while index + 4 <= bytes.count, bytes[index] == 0xFF, bytes[index + 1] != 0xDA {
                let marker = bytes[index + 1]
                let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                segments.append(marker)
                if marker == 0xC0 {
                    let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                    size = (Int(bytes[index + 7]) << 8 | Int(bytes[index + 8]), height)
                }
                index += 2 + length
            }
            #expect(segments == [0xE0, 0xDB, 0xC0, 0xC4])
            #expect(Array(bytes[index..<index + 2]) == [0xFF, 0xDA])
            #expect(size?.width == 641 && size?.height == 479)
            let scan = bytes[(index + 10)..<(bytes.count - 2)]
            #expect(scan.count == (81 * 60 * 2 + 7) / 8 && !scan.contains(0xFF))
            #expect(bytes.suffix(2) == [0xFF, 0xD9])
            try await TemporaryDirectory.with { directory in
                let url = try TestFiles(in: directory).jpeg("photo.jpg", width: 8, height: 8)
                #expect(try [UInt8](Data(contentsOf: url)) == TestImage.jpeg(width: 8, height: 8))
            }
        }

        @Test func pngChunksHaveRealCRCsAndTheImageDataInflates() async throws {
            guard let python = ExecutableSearch.path(of: "python3") else {
                try Test.cancel("python3 is missing (CI installs it): it checks the PNG independently")
            }
            try await TemporaryDirectory.with { directory in
                let url = try TestFiles(in: directory).png(width: 300, height: 260)  // > 65535 bytes: two stored blocks
                let check = """
                    import struct, sys, zlib
                    data = open(sys.argv[1], 'rb').read()
                    assert data[:8] == b'\\x89PNG\\r\\n\\x1a\\n'
                    pos, types, idat = 8, [], b''
                    while pos < len(data):
                        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
                        body = data[pos + 8:pos + 8 + length]
                        (crc,) = struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])
                        assert crc == zlib.crc32(kind + body), kind
                        types.append(kind.decode())
                        if kind == b'IHDR': width, height = struct.unpack('>II', body[:8])
                        if kind == b'IDAT': idat += body
                        pos += 12 + length
                    raw = zlib.decompress(idat)
                    assert len(raw) == height * (width + 1)
                    print(' '.join(types), width, height)
                    """
                let result = try FerryProcess.run(python, ["-c", check, url.path]).requireSuccess()
                #expect(result.stdout == "IHDR IDAT IEND 300 260")
            }
        }

        @Test func treesHaveSeededSizesAndSha256MatchesKnownVector() async throws {
            try await TemporaryDirectory.with { directory in
                let files = TestFiles(in: directory)
                let first = try files.tree(root: "one", files: 200, sizes: 4096...65_536, directories: 3, seed: 5)
                let second = try files.tree(root: "two", files: 200, sizes: 4096...65_536, directories: 3, seed: 5)
                #expect(first == second && first.count == 200)
                #expect(first.allSatisfy { (4096...65_536).contains($0.size) })
                #expect(Set(first.map(\.size)).count > 150)
                #expect(first[0].path == "d00/f0000.bin" && first.contains { $0.path == "d01/f0199.bin" })
                let snapshot = try DirectorySnapshot(of: directory.url.appendingPathComponent("one"))
                #expect(
                    snapshot.entries.filter { $0.kind == .file }.map { TreeFile(path: $0.path, size: $0.size) } == first)
                let a = directory.url.appendingPathComponent("one/d01/f0001.bin")
                let b = directory.url.appendingPathComponent("two/d01/f0001.bin")
                #expect(try TestFiles.sha256(ofFile: a) == TestFiles.sha256(ofFile: b))
                let abc = try files.write("odd \\ name\nabc.txt", bytes: Array("abc".utf8))
                #expect(
                    try TestFiles.sha256(ofFile: abc)
                        == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
            }
        }

        // MARK: DirectorySnapshot

        @Test func directorySnapshotListsHiddenEntriesAndDifferences() async throws {
            try await TemporaryDirectory.with { directory in
                let files = TestFiles(in: directory)
                try files.write("visible.txt", bytes: Array("12345".utf8))
                try files.write(".hidden/.partial", bytes: [1, 2])
                #expect(symlink("/etc/passwd", directory.url.appendingPathComponent("link").path) == 0)
                let before = try DirectorySnapshot(of: directory.url)
                #expect(before.paths == [".hidden", ".hidden/.partial", "link", "visible.txt"])
                #expect(before[".hidden"]?.kind == .directory)
                #expect(before[".hidden/.partial"] == .init(path: ".hidden/.partial", kind: .file, size: 2))
                #expect(before["link"]?.kind == .symbolicLink)
                try files.write("visible.txt", bytes: Array("123".utf8))
                try files.write("new/file.bin", bytes: [0])
                try FileManager.default.removeItem(at: directory.url.appendingPathComponent(".hidden"))
                let after = try DirectorySnapshot(of: directory.url)
                #expect(after.added(since: before).map(\.path) == ["new", "new/file.bin"])
                #expect(after.removed(since: before).map(\.path) == [".hidden", ".hidden/.partial"])
                #expect(after.changed(since: before) == [.init(path: "visible.txt", kind: .file, size: 3)])
                #expect(after == (try DirectorySnapshot(of: directory.url)))
                #expect(after.description.contains("new/file.bin (1 bytes)"))
            }
        }

        // MARK: ResourceUsage

        @Test func resourceUsageReportsPeakMemoryOfTheExitedChild() throws {
            let dd = try FerryProcess(
                executable: "/bin/sh", arguments: ["-c", "read line; exec dd if=/dev/zero of=/dev/null bs=80M count=1"])
            #expect(dd.resourceUsage == nil)
            try dd.send(line: "go")
            #expect(try dd.waitForExit() == 0)
            let usage = try #require(dd.resourceUsage)
            #expect(usage.peakResidentBytes >= 80 << 20)
            #expect(usage.cpuTime == usage.userTime + usage.systemTime)
        }

        /// The file-system type mounted exactly at `path`, from /proc/self/mountinfo (nil if none).
        private func mountedFileSystem(at path: String) throws -> String? {
            let table = try String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
            for line in table.split(separator: "\n") {
                let halves = line.components(separatedBy: " - ")
                let fields = halves[0].split(separator: " ")
                if halves.count == 2, fields.count > 4, fields[4] == path {
                    return halves[1].split(separator: " ").first.map(String.init)
                }
            }
            return nil
        }
    }
}
