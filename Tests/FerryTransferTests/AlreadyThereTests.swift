import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// "Already there" before the data moves (PROTOCOL.md 11.10 rule 10, issue 28 point 1): a sender that kept a file's
/// digests offers them; a receiver that holds the same bytes under the offered name answers the file at its size, and
/// no chunk of it crosses the link. A file of the same size with other bytes goes whole and is published beside.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AlreadyThereTests {
    static let chunk = DigestCacheTests.chunk

    /// Two engines, as `TransferEngineTests.withEngines`, the receiver's hashing budget set.
    static func withEngines(
        inbox: String, cache: DigestCache?, hashLimit: UInt64 = 16 << 30,
        _ body: (_ sender: TransferEngine, _ receiverID: PeerID) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let configuration = TransferEngineTests.configuration
        try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                var receiving = TransferConfiguration(receiveDirectory: inbox, offerPolicy: .all, chunkSize: chunk)
                receiving.alreadyThereHashLimit = hashLimit
                var sending = TransferConfiguration(chunkSize: chunk, compression: .none)
                sending.digestCache = cache
                try await TransferEngine.run(session: bob, configuration: receiving) { _ in
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let info = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        try await body(sender, info.peerID)
                    }
                }
            }
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func names(_ inbox: String) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: inbox).filter { !$0.hasPrefix(".ferry-staging") }.sorted()
    }

    @Test func aFileAlreadyHeldIsAnsweredWithoutAnyChunk() async throws {
        try await TemporaryDirectory.with(prefix: "there-src") { folder in
            try await TemporaryDirectory.with(prefix: "there-in") { inbox in
                let size = 6 * Self.chunk + 123
                let url = try TestFiles(in: folder).random("video.bin", size: size, seed: 11)
                let cache = DigestCache(directory: folder.path + "/cache", settledSeconds: -60)
                try await Self.withEngines(inbox: inbox.path, cache: cache) { sender, bob in
                    let file = SourceFile(path: url.path, name: "video.bin")
                    let first = try #require(try await sender.send([file], to: [bob]).first)
                    #expect(first.isSuccess && first.chunkBytes == UInt64(size), "\(first)")
                    let again = try #require(try await sender.send([file], to: [bob]).first)
                    #expect(again.isSuccess && again.filesAlreadyThere == 1, "\(again)")
                    #expect(again.chunkBytes == 0 && again.wireBytes == 0, "no chunk on the wire: \(again)")
                }
                #expect(try Self.names(inbox.path) == ["video.bin"])
                #expect(try Self.bytes(inbox.path + "/video.bin") == Self.bytes(url.path))
            }
        }
    }

    @Test func aSameSizedFileWithOtherBytesIsSentWholeAndPublishedBeside() async throws {
        try await TemporaryDirectory.with(prefix: "there-src") { folder in
            try await TemporaryDirectory.with(prefix: "there-in") { inbox in
                let size = 5 * Self.chunk
                let url = try TestFiles(in: folder).random("video.bin", size: size, seed: 12)
                let other = try TestFiles(in: folder).random("other.bin", size: size, seed: 13)
                let cache = DigestCache(directory: folder.path + "/cache", settledSeconds: -60)
                try await Self.withEngines(inbox: inbox.path, cache: cache) { sender, bob in
                    let file = SourceFile(path: url.path, name: "video.bin")
                    let first = try #require(try await sender.send([file], to: [bob]).first)
                    #expect(first.isSuccess, "\(first)")
                    try Data(Self.bytes(other.path)).write(to: URL(fileURLWithPath: inbox.path + "/video.bin"))
                    let again = try #require(try await sender.send([file], to: [bob]).first)
                    #expect(again.isSuccess && again.filesAlreadyThere == 0, "\(again)")
                    #expect(again.chunkBytes == UInt64(size), "sent whole: \(again)")
                }
                #expect(try Self.names(inbox.path) == ["video (1).bin", "video.bin"])
                #expect(try Self.bytes(inbox.path + "/video.bin") == Self.bytes(other.path), "left as it was")
                #expect(try Self.bytes(inbox.path + "/video (1).bin") == Self.bytes(url.path))
            }
        }
    }

    @Test func aFolderAlreadyHeldCostsNoChunk() async throws {
        try await TemporaryDirectory.with(prefix: "there-src") { folder in
            try await TemporaryDirectory.with(prefix: "there-in") { inbox in
                let album = folder.path + "/album"
                try FileManager.default.createDirectory(atPath: album + "/sub", withIntermediateDirectories: true)
                let files = TestFiles(in: folder)
                var sizes: UInt64 = 0
                for (index, name) in ["album/a.bin", "album/sub/b.bin", "album/sub/c.bin"].enumerated() {
                    let size = (4 + index) * Self.chunk + index
                    _ = try files.random(name, size: size, seed: UInt64(20 + index))
                    sizes += UInt64(size)
                }
                let cache = DigestCache(directory: folder.path + "/cache", settledSeconds: -60)
                try await Self.withEngines(inbox: inbox.path, cache: cache) { sender, bob in
                    let items = try SourceFile.folder(album).files
                    let first = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(first.isSuccess && first.chunkBytes == sizes, "\(first)")
                    let again = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(again.isSuccess && again.filesAlreadyThere == 3, "\(again)")
                    #expect(again.chunkBytes == 0, "no chunk on the wire: \(again)")
                }
                #expect(try Self.names(inbox.path).filter { $0.hasSuffix(".bin") }.count == 3)
            }
        }
    }

    /// A folder of small files (under `DigestCache.minimumChunks` chunks, which had no entry and so no digest in the
    /// offer) sent again costs their digests, not their bytes.
    @Test func aFolderOfSmallFilesAlreadyHeldCostsNoChunk() async throws {
        try await TemporaryDirectory.with(prefix: "there-src") { folder in
            try await TemporaryDirectory.with(prefix: "there-in") { inbox in
                let small = folder.path + "/small"
                try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
                let files = TestFiles(in: folder)
                var sizes: UInt64 = 0
                for index in 0..<24 {
                    let size = 1 + index * (3 * Self.chunk - 1) / 23  // 1 byte to 3 chunks
                    _ = try files.random("small/f\(index).bin", size: size, seed: UInt64(100 + index))
                    sizes += UInt64(size)
                }
                let cache = DigestCache(directory: folder.path + "/cache", settledSeconds: -60)
                try await Self.withEngines(inbox: inbox.path, cache: cache) { sender, bob in
                    let items = try SourceFile.folder(small).files
                    let first = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(first.isSuccess && first.chunkBytes == sizes, "\(first)")
                    let again = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(again.isSuccess && again.filesAlreadyThere == 24, "\(again)")
                    #expect(again.chunkBytes == 0, "no chunk on the wire: \(again)")
                }
                #expect(try Self.names(inbox.path).filter { $0.hasSuffix(".bin") }.count == 24)
            }
        }
    }

    /// The receiver hashes at most its budget for a sender: past it, a held file goes the ordinary way (sent, then
    /// found identical after its bytes arrived).
    @Test func theHashingBudgetSendsTheRestTheOrdinaryWay() async throws {
        try await TemporaryDirectory.with(prefix: "there-src") { folder in
            try await TemporaryDirectory.with(prefix: "there-in") { inbox in
                let size = 4 * Self.chunk
                let files = TestFiles(in: folder)
                let a = try files.random("a.bin", size: size, seed: 31)
                let b = try files.random("b.bin", size: size, seed: 32)
                let cache = DigestCache(directory: folder.path + "/cache", settledSeconds: -60)
                try await Self.withEngines(inbox: inbox.path, cache: cache, hashLimit: UInt64(size)) { sender, bob in
                    let items = [SourceFile(path: a.path, name: "a.bin"), SourceFile(path: b.path, name: "b.bin")]
                    let first = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(first.isSuccess, "\(first)")
                    let again = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(again.isSuccess && again.filesAlreadyThere == 2, "\(again)")
                    #expect(again.chunkBytes == UInt64(size), "one file within the budget, one sent: \(again)")
                }
                #expect(try Self.names(inbox.path) == ["a.bin", "b.bin"])
            }
        }
    }

    /// A sender that offers no digests (an older one, or without kept digests) is answered as before: the file is
    /// sent and found identical once its bytes arrived.
    @Test func anOfferWithoutDigestsSendsTheBytesAsBefore() async throws {
        try await TemporaryDirectory.with(prefix: "there-src") { folder in
            try await TemporaryDirectory.with(prefix: "there-in") { inbox in
                let size = 4 * Self.chunk
                let url = try TestFiles(in: folder).random("video.bin", size: size, seed: 41)
                try await Self.withEngines(inbox: inbox.path, cache: nil) { sender, bob in
                    let file = SourceFile(path: url.path, name: "video.bin")
                    _ = try await sender.send([file], to: [bob])
                    let again = try #require(try await sender.send([file], to: [bob]).first)
                    #expect(again.isSuccess && again.filesAlreadyThere == 1, "\(again)")
                    #expect(again.chunkBytes == UInt64(size), "\(again)")
                }
                #expect(try Self.names(inbox.path) == ["video.bin"])
            }
        }
    }
}

extension AlreadyThereTests {
    /// A sender driven by hand offers a digest of the receiver's file, is answered at the file's size, then sends a
    /// `fileEnd` with another digest: the file fails `hashMismatch`, and the held file is left as it was, nothing
    /// beside it (PROTOCOL.md 11.10 rule 10).
    @Test func aFileEndThatDisagreesWithTheOfferedDigestFailsAndLeavesTheHeldFile() async throws {
        try await TemporaryDirectory.with(prefix: "there-in") { inbox in
            let size = 4 * Self.chunk + 7
            let held = try TestFiles(in: inbox).random("held.bin", size: size, seed: 51)
            let bytes = try Self.bytes(held.path)
            let digest = FileDigest.of(bytes, chunkSize: Self.chunk)
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    let receiving = TransferConfiguration(
                        receiveDirectory: inbox.path, offerPolicy: .all, chunkSize: Self.chunk)
                    try await TransferEngine.run(session: bob, configuration: receiving) { _ in
                        let info = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        let id = TransferID.random()
                        let offer = Offer(
                            transferID: id, chunkSize: UInt32(Self.chunk), codecs: [],
                            files: [
                                OfferedFile(
                                    path: "held.bin", size: UInt64(size), permissions: 0o644,
                                    modificationTime: FileTime(seconds: 1_767_225_600, nanoseconds: 0))
                            ], fileDigests: [0: digest])
                        _ = try await alice.sendTransferFrame(
                            [TransferMessage.offer(offer).frame.encoded()], to: info.peerID)
                        var result: FileResult?
                        for await event in alice.transferEvents {
                            guard case .frame(let frame, _) = event else { continue }
                            switch try TransferMessage(frame: frame) {
                            case .offerReply(let reply):
                                #expect(reply.accepted && reply.files.map(\.resumeOffset) == [UInt64(size)])
                                let end = FileEnd(transferID: id, fileIndex: 0, digest: Array(repeating: 9, count: 32))
                                _ = try await alice.sendTransferFrame(
                                    [TransferMessage.fileEnd(end).frame.encoded()], to: info.peerID)
                            case .fileResult(let got):
                                result = got
                            default:
                                continue
                            }
                            if result != nil { break }
                        }
                        #expect(
                            result?.status == .hashMismatch && result?.identical == false,
                            "\(String(describing: result))")
                    }
                }
            }
            #expect(try Self.names(inbox.path) == ["held.bin"])
            #expect(try Self.bytes(held.path) == bytes, "left as it was")
        }
    }
}
