import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The chunk source and the engine with a `DigestCache`: a first pass keeps the file's chunk digests when the send
/// ends; a later send of the unchanged file sends the kept ones without hashing; a peer that finds a chunk corrupt
/// makes the sender forget them.
@Suite(.serialized, .timeLimit(.minutes(2))) struct KeptDigestTests {
    static let chunk = DigestCacheTests.chunk

    /// A source for one raw peer over the file at `path`, prepared as `send` prepares it (its kept digests looked up).
    static func source(_ path: String, cache: DigestCache) async throws -> ChunkSource {
        let files = try await PreparedFile.prepareAll(
            [.file(SourceFile(path: path, name: "video.bin"))], digests: (cache, chunk))
        return ChunkSource(
            files: files, chunkSize: chunk, policy: CompressionPolicy(mode: .none, available: []), cacheLimit: 0,
            digestCache: cache)
    }

    /// Every chunk of file 0, in order.
    static func chunks(of source: ChunkSource, size: Int) async throws -> [ChunkSource.Prepared] {
        var prepared: [ChunkSource.Prepared] = []
        for offset in stride(from: 0, to: size, by: chunk) {
            prepared.append(
                try await source.chunk(
                    file: 0, offset: UInt64(offset), length: min(chunk, size - offset), cycle: nil))
        }
        return prepared
    }

    /// A random file of `size` bytes in `folder`, a cache there that keeps files just written, and the file's status.
    struct Scene {
        var url: URL
        var bytes: [UInt8]
        var cache: DigestCache
        var status: FerrySystem.FileStatus
    }

    static func scene(in folder: TemporaryDirectory, size: Int, seed: UInt64) throws -> Scene {
        let url = try TestFiles(in: folder).random("video.bin", size: size, seed: seed)
        return Scene(
            url: url, bytes: [UInt8](try Data(contentsOf: url)),
            cache: DigestCache(directory: folder.path + "/cache", settledSeconds: -60),
            status: try DigestCacheTests.status(url.path))
    }

    /// Plants `digests` in `scene`'s cache as the file's kept digests.
    static func plant(_ digests: [UInt8], in scene: Scene) {
        let now = Date().timeIntervalSince1970
        #expect(scene.cache.store(digests, for: scene.status, statedAt: now, chunkSize: chunk), "planted")
    }

    /// The first send hashes and keeps the digests (only once the send ends, and only for a file hashed whole); the
    /// second finds them and sends them as they were kept: the fake digests planted here come out, with the file's
    /// real bytes and the file digest of those digests.
    @Test func aKeptFileIsReadWithItsKeptDigestsNotHashed() async throws {
        try await TemporaryDirectory.with(prefix: "kept-digests") { folder in
            let size = 4 * Self.chunk + 100
            let scene = try Self.scene(in: folder, size: size, seed: 5)
            let (url, bytes, cache, status) = (scene.url, scene.bytes, scene.cache, scene.status)

            let partial = try await Self.source(url.path, cache: cache)
            _ = try await partial.chunk(file: 0, offset: 0, length: Self.chunk, cycle: nil)
            await partial.close()
            #expect(cache.entryCount() == 0, "a file not hashed whole is not kept")

            let first = try await Self.source(url.path, cache: cache)
            let firstChunks = try await Self.chunks(of: first, size: size)
            #expect(firstChunks.flatMap(\.sha256) == DigestCacheTests.realDigests(bytes))
            #expect(cache.entryCount() == 0, "kept when the send ends")
            await first.close()
            #expect(cache.lookup(status, chunkSize: Self.chunk) == DigestCacheTests.realDigests(bytes))

            let fake = DigestCacheTests.fakeDigests(5)
            Self.plant(fake, in: scene)
            let second = try await Self.source(url.path, cache: cache)
            let secondChunks = try await Self.chunks(of: second, size: size)
            #expect(secondChunks.flatMap(\.sha256) == fake, "the kept digests, not the bytes' own")
            #expect(secondChunks.flatMap(\.data) == bytes, "the file's bytes")
            #expect(secondChunks.last?.fileDigest == FileDigest.of(chunkDigests: fake), "fileEnd with the last chunk")
            #expect(try await second.digest(of: 0) == FileDigest.of(chunkDigests: fake))
            await second.close()
            #expect(cache.lookup(status, chunkSize: Self.chunk) == fake, "a file read with kept digests stores nothing")
        }
    }

    /// `--rehash`: a cache that does not read its entries hashes the file (the planted digests do not come out) and
    /// keeps what it hashed, replacing them.
    @Test func aRehashHashesAndKeepsTheNewDigests() async throws {
        try await TemporaryDirectory.with(prefix: "kept-digests") { folder in
            let size = 4 * Self.chunk
            let scene = try Self.scene(in: folder, size: size, seed: 9)
            let (url, bytes, cache, status) = (scene.url, scene.bytes, scene.cache, scene.status)
            Self.plant(DigestCacheTests.fakeDigests(4), in: scene)
            let rehash = DigestCache(directory: cache.directory, settledSeconds: -60, readsEntries: false)
            #expect(rehash.lookup(status, chunkSize: Self.chunk) == nil)
            let source = try await Self.source(url.path, cache: rehash)
            let chunks = try await Self.chunks(of: source, size: size)
            #expect(chunks.flatMap(\.sha256) == DigestCacheTests.realDigests(bytes))
            await source.close()
            #expect(cache.lookup(status, chunkSize: Self.chunk) == DigestCacheTests.realDigests(bytes), "replaced")
        }
    }

    /// A chunk found corrupt: the kept digests are forgotten here and in the cache, the chunk goes again with the
    /// digest of its bytes, and the file digest is computed from the file.
    @Test func aCorruptChunkMakesTheSourceForgetTheKeptDigests() async throws {
        try await TemporaryDirectory.with(prefix: "kept-digests") { folder in
            let size = 5 * Self.chunk
            let scene = try Self.scene(in: folder, size: size, seed: 6)
            let (url, bytes, cache, status) = (scene.url, scene.bytes, scene.cache, scene.status)
            let fake = DigestCacheTests.fakeDigests(5)
            Self.plant(fake, in: scene)
            let source = try await Self.source(url.path, cache: cache)
            let stale = try await source.chunk(file: 0, offset: 0, length: Self.chunk, cycle: nil)
            #expect(stale.sha256 == Array(fake.prefix(32)))
            _ = try await source.chunk(file: 0, offset: UInt64(Self.chunk), length: Self.chunk, cycle: nil)

            await source.forgetKeptDigests(file: 0)
            #expect(cache.lookup(status, chunkSize: Self.chunk) == nil, "the entry is gone")
            let again = try await Self.chunks(of: source, size: size)
            #expect(again.flatMap(\.sha256) == DigestCacheTests.realDigests(bytes))
            #expect(try await source.digest(of: 0) == FileDigest.of(bytes, chunkSize: Self.chunk))
            await source.close()
            #expect(cache.lookup(status, chunkSize: Self.chunk) == DigestCacheTests.realDigests(bytes), "kept anew")
        }
    }

    /// Through two engines: the first send keeps the digests and the second uses them. A planted stale entry makes
    /// the receiver find the chunks corrupt: the sender forgets the entry and sends the bytes again with their own
    /// digests. Either the `fileEnd` had gone with the stale file digest (the receiver publishes nothing and answers
    /// `hashMismatch`) or not yet (the file arrives, right); never a wrong file. The next send hashes the file.
    @Test func aStaleEntryCostsAResendOrAFailedFileNeverAWrongOne() async throws {
        try await TemporaryDirectory.with(prefix: "kept-src") { folder in
            try await TemporaryDirectory.with(prefix: "kept-in") { inbox in
                let scene = try Self.scene(in: folder, size: 6 * Self.chunk, seed: 7)
                let (url, bytes, cache, status) = (scene.url, scene.bytes, scene.cache, scene.status)
                try await TransferEngineTests.withEngines(
                    inbox: inbox.path, chunkSize: Self.chunk, compression: .none, digestCache: cache
                ) { _, sender, bob in
                    func send(_ name: String) async throws -> TransferOutcome {
                        try #require(try await sender.send([SourceFile(path: url.path, name: name)], to: [bob]).first)
                    }
                    let first = try await send("a.bin")
                    #expect(first.isSuccess, "\(first)")
                    #expect(cache.lookup(status, chunkSize: Self.chunk) == DigestCacheTests.realDigests(bytes))
                    let second = try await send("b.bin")
                    #expect(second.isSuccess, "a kept entry: \(second)")

                    let fake = DigestCacheTests.fakeDigests(6)
                    Self.plant(fake, in: scene)
                    // Which of the two ways it ends depends on the timing: if the first `corrupt` came back before the
                    // last chunk went, the `fileEnd` carries the digest of the bytes and the file arrives.
                    let stale = try await send("c.bin")
                    #expect(stale.isSuccess || stale.filesFailed == 1, "\(stale)")
                    #expect(cache.lookup(status, chunkSize: Self.chunk) != fake, "the stale entry is forgotten")
                    let copy = inbox.path + "/c.bin"
                    if stale.isSuccess {
                        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: copy))) == bytes)
                    } else {
                        #expect(!FileManager.default.fileExists(atPath: copy), "nothing that did not verify")
                    }

                    let fourth = try await send("d.bin")
                    #expect(fourth.isSuccess, "\(fourth)")
                }
                for name in ["a.bin", "b.bin", "d.bin"] {
                    let copy = URL(fileURLWithPath: inbox.path + "/" + name)
                    #expect([UInt8](try Data(contentsOf: copy)) == bytes, "\(name)")
                }
            }
        }
    }

    /// The other way a stale entry ends, made certain by a receiver driven by hand: it takes every chunk without
    /// checking (the `fileEnd` with the stale file digest is then sent) and answers `hashMismatch`. The sender says
    /// the kept digests were stale and to send the file again, and forgets them.
    @Test func aFileRefusedAfterItsKeptDigestsWentSaysTheyWereStale() async throws {
        try await TemporaryDirectory.with(prefix: "kept-digests") { folder in
            let scene = try Self.scene(in: folder, size: 4 * Self.chunk, seed: 8)
            let (url, cache, status) = (scene.url, scene.cache, scene.status)
            Self.plant(DigestCacheTests.fakeDigests(4), in: scene)
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    var sending = TransferConfiguration(chunkSize: Self.chunk, compression: .none)
                    sending.digestCache = cache
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let info = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        let failures = Task {
                            var failures: [String] = []
                            for await event in sender.events {
                                if case .fileFinished(let outcome) = event, let failure = outcome.failure {
                                    failures.append(failure)
                                }
                                if case .finished = event { break }
                            }
                            return failures
                        }
                        let sending = Task {
                            try await sender.send([SourceFile(path: url.path, name: "video.bin")], to: [info.peerID])
                        }
                        try await Self.refuseByHand(on: bob, from: alice.localPeerID)
                        let outcome = try #require(try await sending.value.first)
                        #expect(outcome.filesFailed == 1, "\(outcome)")
                        let texts = await failures.value
                        #expect(
                            texts.count == 1 && texts[0].contains("kept from an earlier send")
                                && texts[0].contains("send it again"), "\(texts)")
                        #expect(cache.lookup(status, chunkSize: Self.chunk) == nil, "forgotten")
                    }
                }
            }
        }
    }

    /// Accepts the offer, acknowledges every chunk `stored` unchecked, and answers the `fileEnd` with `hashMismatch`.
    static func refuseByHand(on bob: Session, from alice: PeerID) async throws {
        for await event in bob.transferEvents {
            guard case .frame(let frame, let peer) = event, peer == alice else { continue }
            switch try TransferMessage(frame: frame) {
            case .offer(let offer):
                let reply = OfferReply.accepting(
                    offer.transferID, codecs: [], files: [FileDecision(accepted: true, resumeOffset: 0)])
                _ = try await bob.sendTransferFrame([TransferMessage.offerReply(reply).frame.encoded()], to: alice)
            case .chunk(let chunk):
                let ack = ChunkAck(
                    transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, status: .stored)
                _ = try await bob.sendTransferFrame([TransferMessage.chunkAck(ack).frame.encoded()], to: alice)
            case .fileEnd(let end):
                let result = FileResult(
                    transferID: end.transferID, fileIndex: end.fileIndex, status: .hashMismatch, detail: "")
                _ = try await bob.sendTransferFrame([TransferMessage.fileResult(result).frame.encoded()], to: alice)
                return
            default:
                continue
            }
        }
    }
}
