import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// Files appear as they land: a verified file is published (and reported) while later files of the same offer
/// still stream, and a file the receiver already holds byte for byte is not published a second time.
@Suite(.serialized, .timeLimit(.minutes(1))) struct PublishAsTheyLandTests {
    static let small: [UInt8] = Array("a small file, sent first\n".utf8)
    /// Two chunks of 64 KiB: the scripted sender holds the second one back.
    static let large: [UInt8] = (0..<(2 * Limits.minChunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// The receiver's engine: the first `fileFinished` of `file`, or nil if the stream ended first.
    static func fileFinished(_ engine: TransferEngine, file: Int) -> Task<FileOutcome?, Never> {
        Task {
            for await event in engine.events {
                if case .fileFinished(let outcome) = event, outcome.fileIndex == file { return outcome }
            }
            return nil
        }
    }

    /// Without a timer or a sleep: the large file's last chunk is not even sent until the small file's result has
    /// come back, so the small file can only be there if it was published while the large one was still open.
    @Test func aVerifiedFileIsPublishedBeforeTheNextFileOfTheOfferEnds() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let finished = Self.fileFinished(engine, file: 0)
                let sender = HostileSender(session: mallory, receiver: bob)
                let offer = sender.offer([
                    ("small.txt", UInt64(Self.small.count)), ("large.bin", UInt64(Self.large.count)),
                ])
                try await sender.send(.offer(offer))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: Self.small)
                try await sender.sendEnd(file: 0, of: Self.small)
                let half = Limits.minChunkSize
                try await sender.sendChunk(file: 1, offset: 0, raw: Array(Self.large[..<half]))

                // The large file's last chunk is still here: the small file must be published all the same.
                let result = try #require(await sender.result())
                #expect(result.fileIndex == 0 && result.status == .published && result.detail == "small.txt")
                #expect(!result.identical)
                let outcome = try #require(await finished.value, "the receiver reports the file as it lands")
                #expect(outcome.publishedName == "small.txt" && outcome.failure == nil && !outcome.alreadyThere)
                let visible = try FileManager.default.contentsOfDirectory(atPath: inbox.path).filter {
                    $0 != ".ferry-staging"
                }
                #expect(visible == ["small.txt"], "only the small file is there yet")
                #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/small.txt"))) == Self.small)

                // Now the rest of the large file.
                try await sender.sendChunk(file: 1, offset: UInt64(half), raw: Array(Self.large[half...]))
                try await sender.sendEnd(file: 1, of: Self.large)
                let second = try #require(await sender.result())
                #expect(second.fileIndex == 1 && second.status == .published && second.detail == "large.bin")
            }
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/large.bin"))) == Self.large)
        }
    }

    /// The same bytes under the same name: the receiver says so (`identical`) and publishes no "name (1)"; the
    /// same name with other bytes of the same size still gets its numbered variant, the first file untouched.
    @Test func theSameBytesUnderTheSameNameAreAlreadyThereOtherBytesGetAVariant() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            let mine = Self.small.map { $0 ^ 0x20 }  // same size, other bytes
            try Data(Self.small).write(to: URL(fileURLWithPath: inbox.path + "/same.txt"))
            try Data(mine).write(to: URL(fileURLWithPath: inbox.path + "/other.txt"))
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let finished = Self.fileFinished(engine, file: 0)
                let sender = HostileSender(session: mallory, receiver: bob)
                let size = UInt64(Self.small.count)
                try await sender.send(.offer(sender.offer([("same.txt", size), ("other.txt", size)])))
                #expect(try #require(await sender.reply()).accepted)
                for file in [UInt32(0), 1] {
                    try await sender.sendChunk(file: file, offset: 0, raw: Self.small)
                    try await sender.sendEnd(file: file, of: Self.small)
                }
                var results: [UInt32: FileResult] = [:]
                while results.count < 2, let result = await sender.result() { results[result.fileIndex] = result }
                let same = try #require(results[0])
                #expect(same.status == .published && same.detail == "same.txt" && same.identical)
                let other = try #require(results[1])
                #expect(other.status == .published && other.detail == "other (1).txt" && !other.identical)
                let outcome = try #require(await finished.value)
                #expect(outcome.alreadyThere && outcome.publishedName == "same.txt" && outcome.failure == nil)
            }
            let visible = try FileManager.default.contentsOfDirectory(atPath: inbox.path).filter {
                $0 != ".ferry-staging"
            }
            #expect(Set(visible) == ["same.txt", "other.txt", "other (1).txt"])
            func bytes(_ name: String) throws -> [UInt8] {
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/" + name)))
            }
            #expect(try bytes("same.txt") == Self.small)
            #expect(try bytes("other.txt") == mine, "the first file is never replaced")
            #expect(try bytes("other (1).txt") == Self.small)
            let staged = try FileManager.default.contentsOfDirectory(atPath: inbox.path + "/.ferry-staging")
            #expect(staged.isEmpty, "the identical copy is not left in staging: \(staged)")
        }
    }

    /// A taken name counts as the same file only when it is a regular file with the same bytes: a symlink to an
    /// identical file (never followed) or a directory gets a numbered variant, and nothing taken is changed.
    @Test func onlyARegularFileWithTheSameBytesIsIdentical() async throws {
        try await TemporaryDirectory.with(prefix: "publish") { temporary in
            let bytes = Self.small
            let digest = (bytes: FileDigest.of(bytes, chunkSize: Limits.minChunkSize), chunkSize: Limits.minChunkSize)
            try Data(bytes).write(to: URL(fileURLWithPath: temporary.path + "/outside.txt"))
            let path = temporary.path + "/inbox"
            let directory = try ReceiveDirectory(path: path)
            defer { directory.close() }
            try FileManager.default.createSymbolicLink(
                atPath: path + "/link.txt", withDestinationPath: temporary.path + "/outside.txt")
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/same.txt"))
            let key = String(repeating: "a", count: 64)
            func stageAndPublish(_ name: String) throws -> PublishedFile {
                let (file, _) = try directory.stagedFile(key: key)
                try file.write(bytes, at: 0)
                return try directory.publish(
                    key: key, components: [name], permissions: 0o644, modificationTime: (0, 0), staged: file,
                    digest: digest)
            }
            #expect(try stageAndPublish("link.txt") == .published("link (1).txt"), "a symlink is never the file")
            #expect(try stageAndPublish("same.txt") == .identical("same.txt"))
            #expect(directory.stagedLength(key: key) == nil, "the identical copy is dropped")
            #expect(try stageAndPublish("same.txt") == .identical("same.txt"), "and again")
            var info = stat()
            #expect(lstat(path + "/link.txt", &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
            let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0 != ".ferry-staging" }
            #expect(Set(names) == ["link.txt", "link (1).txt", "same.txt"])
        }
    }
}
