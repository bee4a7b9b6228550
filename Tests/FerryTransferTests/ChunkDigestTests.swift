import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The chunk digests and the file digest built from them (PROTOCOL.md 11.5, 11.7, 11.10 rules 3-5 and 8), both
/// ends: a chunk whose bytes do not match its digest is `corrupt` and sent again (go-back-N), the sender's chunk and
/// file digests are what an independent computation gives, and a resumed file verifies against the digest of the
/// whole file because the staged prefix feeds it chunk by chunk.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ChunkDigestTests {
    static let chunk = Limits.minChunkSize

    /// Receiver: a chunk whose data is not what its digest says is answered `corrupt`, the chunks after it are dropped
    /// unacknowledged until it comes again, and the good copy is stored; the file is published intact. A third bad
    /// copy of one chunk ends the file with `corruptChunks`.
    @Test func aChunkThatDoesNotMatchItsDigestIsCorruptAndTakenAgain() async throws {
        let data = TestFiles.randomBytes(count: 3 * Self.chunk, seed: 21)
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, _ in
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(.offer(sender.offer([("three.bin", UInt64(data.count)), ("bad.bin", 1)])))
                #expect(try #require(await sender.reply()).accepted)
                let piece = { (index: Int) in Array(data[index * Self.chunk..<(index + 1) * Self.chunk]) }
                try await sender.sendChunk(file: 0, offset: 0, raw: piece(0))
                #expect(try #require(await sender.ack()).status == .stored)
                // The second chunk's bytes with one bit flipped, under the digest of the true bytes.
                var flipped = piece(1)
                flipped[5] ^= 0x04
                try await Self.sendChunk(sender, file: 0, offset: Self.chunk, digestOf: piece(1), data: flipped)
                // In flight behind it: dropped without an acknowledgement (go-back-N).
                try await sender.sendChunk(file: 0, offset: UInt64(2 * Self.chunk), raw: piece(2))
                let corrupt = try #require(await sender.ack())
                #expect(corrupt.status == .corrupt && corrupt.offset == UInt64(Self.chunk), "\(corrupt)")
                try await sender.sendChunk(file: 0, offset: UInt64(Self.chunk), raw: piece(1))
                let again = try #require(await sender.ack())
                #expect(again.status == .stored && again.offset == UInt64(Self.chunk), "\(again)")
                try await sender.sendChunk(file: 0, offset: UInt64(2 * Self.chunk), raw: piece(2))
                #expect(try #require(await sender.ack()).offset == UInt64(2 * Self.chunk))
                try await sender.sendEnd(file: 0, of: data)
                let result = try #require(await sender.result())
                #expect(result.status == .published && result.fileIndex == 0, "\(result)")

                // File 1: three copies that do not match their digest, and the file ends.
                for _ in 0..<2 {
                    try await Self.sendChunk(sender, file: 1, offset: 0, digestOf: [1], data: [2])
                    #expect(try #require(await sender.ack()).status == .corrupt)
                }
                try await Self.sendChunk(sender, file: 1, offset: 0, digestOf: [1], data: [2])
                let failed = try #require(await sender.result())
                #expect(failed.status == .corruptChunks && failed.fileIndex == 1, "\(failed)")
            }
            let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/three.bin")))
            #expect(received == data, "the published file is the sent one")
            #expect(!FileManager.default.fileExists(atPath: inbox.path + "/bad.bin"))
        }
    }

    /// A raw chunk whose data is `data` but whose digest is that of `digestOf`.
    static func sendChunk(_ sender: HostileSender, file: UInt32, offset: Int, digestOf: [UInt8], data: [UInt8])
        async throws
    {
        let header = Chunk.frameHeader(
            transferID: sender.transferID, fileIndex: file, offset: UInt64(offset), rawLength: UInt32(data.count),
            codec: .none, sha256: FileDigest.chunkDigest(digestOf), dataLength: data.count)
        try await sender.session.sendTransferFrame([header, data], to: sender.receiver)
    }

    /// A transfer stops after two of four chunks; the same file offered again resumes from the staged prefix, and the
    /// rest with the digest of the whole file (computed apart, from the bytes) verifies: the prefix fed the file
    /// digest chunk by chunk, exactly as received chunks do. (A prefix changed on disk fails instead:
    /// `DigestCheckTests.aCorruptResumedPrefixIsStoppedByTheDigestAndTheNextOfferStartsOver`.)
    @Test func aResumedFileVerifiesAgainstTheDigestOfTheWholeFile() async throws {
        let data = TestFiles.randomBytes(count: 3 * Self.chunk + 777, seed: 22)
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, _ in
                let first = HostileSender(session: mallory, receiver: bob)
                try await first.send(.offer(first.offer([("resumed.bin", UInt64(data.count))])))
                #expect(try #require(await first.reply()).accepted)
                for start in [0, Self.chunk] {
                    try await first.sendChunk(
                        file: 0, offset: UInt64(start), raw: Array(data[start..<start + Self.chunk]))
                    #expect(try #require(await first.ack()).status == .stored)
                }
                try await first.send(
                    .cancel(TransferCancel(transferID: first.transferID, reason: .cancelledByUser, detail: "")))

                let second = HostileSender(session: mallory, receiver: bob)
                try await second.send(.offer(second.offer([("resumed.bin", UInt64(data.count))])))
                let resume = try #require(await second.reply()).files.first?.resumeOffset
                #expect(resume == UInt64(2 * Self.chunk))
                for start in stride(from: 2 * Self.chunk, to: data.count, by: Self.chunk) {
                    let piece = Array(data[start..<min(start + Self.chunk, data.count)])
                    try await second.sendChunk(file: 0, offset: UInt64(start), raw: piece)
                    #expect(try #require(await second.ack()).status == .stored)
                }
                try await second.sendEnd(file: 0, of: data)
                let result = try #require(await second.result())
                #expect(result.status == .published && result.detail == "resumed.bin", "\(result)")
            }
            let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/resumed.bin")))
            #expect(received == data)
        }
    }

    /// Sender: every chunk carries the SHA-256 of its raw bytes, a chunk the receiver calls corrupt is sent again
    /// (with the chunks after it), and the fileEnd digest is the file digest of the file's bytes at the offer's chunk
    /// size, as computed apart from the engine.
    @Test func theSenderResendsACorruptChunkAndEndsWithTheFileDigest() async throws {
        try await TemporaryDirectory.with(prefix: "engine-src") { source in
            let url = try TestFiles(in: source).random("sent.bin", size: 4 * Self.chunk + 99, seed: 23)
            let bytes = try [UInt8](Data(contentsOf: url))
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("mallory"), reactor: reactor) { mallory in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    let sending = TransferConfiguration(chunkSize: Self.chunk, compression: .none)
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let link = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await mallory.listenPort), timeout: .seconds(30))
                        let receiver = Task { try await Self.receiveCallingOneChunkCorrupt(mallory, bytes: bytes) }
                        defer { receiver.cancel() }
                        let outcomes = try await sender.send(
                            [SourceFile(path: url.path, name: "sent.bin")], to: [link.peerID])
                        #expect(outcomes.count == 1 && outcomes.first?.isSuccess == true, "\(outcomes)")
                        let seen = try await receiver.value
                        #expect(seen.corruptOffset == UInt64(Self.chunk))
                        #expect(seen.copiesOfCorrupt == 2, "the chunk called corrupt came again")
                        #expect(seen.fileDigest == FileDigest.of(bytes, chunkSize: Self.chunk))
                        #expect(seen.fileDigest != SHA256Hasher.digest(bytes))
                    }
                }
            }
        }
    }

    struct Seen: Sendable {
        var corruptOffset: UInt64?
        var copiesOfCorrupt = 0
        var fileDigest: [UInt8] = []
    }

    /// Plays an honest go-back-N receiver of one file that checks every chunk against `bytes` and its digest, calls
    /// the first copy of the second chunk corrupt, and answers `published` once every chunk is stored and the
    /// fileEnd (which may come before the chunk sent again: it is sent once, rule 5) matches its own digest.
    static func receiveCallingOneChunkCorrupt(_ mallory: Session, bytes: [UInt8]) async throws -> Seen {
        var seen = Seen()
        var expected: UInt64 = 0
        var end: FileEnd?
        let digest = FileDigest()
        for await event in mallory.transferEvents {
            guard case .frame(let frame, let peer) = event, let message = try? TransferMessage(frame: frame) else {
                continue
            }
            var replies: [TransferMessage] = []
            switch message {
            case .offer(let offer):
                replies = [.offerReply(.accepting(offer.transferID, codecs: [], files: [.accept(from: 0)]))]
            case .chunk(let chunk):
                let start = Int(chunk.offset)
                #expect(Array(chunk.data) == Array(bytes[start..<start + Int(chunk.rawLength)]))
                #expect(chunk.sha256 == FileDigest.chunkDigest(chunk.data), "the chunk digest at \(start)")
                if chunk.offset == UInt64(Self.chunk) { seen.copiesOfCorrupt += 1 }
                guard chunk.offset == expected else { continue }  // go-back-N: dropped
                var status = ChunkStatus.stored
                if chunk.offset == UInt64(Self.chunk), seen.corruptOffset == nil {
                    seen.corruptOffset = chunk.offset
                    status = .corrupt
                } else {
                    digest.add(chunkDigest: chunk.sha256)
                    expected += UInt64(chunk.rawLength)
                }
                replies = [
                    .chunkAck(
                        ChunkAck(transferID: chunk.transferID, fileIndex: 0, offset: chunk.offset, status: status))
                ]
            case .fileEnd(let fileEnd):
                end = fileEnd
            default:
                continue
            }
            if let end, expected == UInt64(bytes.count) {
                seen.fileDigest = end.digest
                #expect(end.digest == digest.finalize(), "the digest over the chunk digests received")
                replies.append(
                    .fileResult(
                        FileResult(transferID: end.transferID, fileIndex: 0, status: .published, detail: "sent.bin")))
            }
            for reply in replies { try await mallory.sendTransferFrame([reply.frame.encoded()], to: peer) }
            if !seen.fileDigest.isEmpty { return seen }
        }
        return seen
    }
}
