import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// A source file rewritten in place while it is sent, its modification time put back (`dd conv=notrunc`, then
/// `touch -d`), is never sent as verified (issue 9, section 5): the sender fails that file with `fileResult`
/// `sourceChanged` instead of a `fileEnd`, and a receiver told so publishes nothing of it and keeps no staged data.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SourceChangeTests {
    static let chunk = Limits.minChunkSize

    /// Rewrites `count` bytes at `offset` of `path` in place and sets its modification time back, as
    /// `dd conv=notrunc` and `touch -d` do; first waits until the kernel's coarse clock has moved past the file's
    /// last change, so the rewrite gets another change time (on a kernel that stamps files with the coarse clock, two
    /// changes within one tick share one).
    static func rewriteInPlace(_ path: String, at offset: Int, count: Int) throws {
        var before = stat()
        try #require(stat(path, &before) == 0)
        var now = timespec()
        repeat {
            clock_gettime(CLOCK_REALTIME_COARSE, &now)
        } while (now.tv_sec, now.tv_nsec) <= (before.st_ctim.tv_sec, before.st_ctim.tv_nsec)
        let descriptor = open(path, O_WRONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let replacement = [UInt8](repeating: 0xEE, count: count)
        try #require(pwrite(descriptor, replacement, count, off_t(offset)) == count)
        let omit = (1 << 30) - 2  // UTIME_OMIT (a macro Swift does not import): leave the access time
        var times = [timespec(tv_sec: 0, tv_nsec: omit), before.st_mtim]
        try #require(futimens(descriptor, &times) == 0)
        var after = stat()
        try #require(fstat(descriptor, &after) == 0)
        try #require(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        try #require(after.st_size == before.st_size)
    }

    /// The sending engine, a window of one chunk, to a bare session that answers by hand: the file is rewritten after
    /// its first chunk was read and before the second is. The sender sends no `fileEnd` for it (the splice of old
    /// and new bytes would verify) but `fileResult` `sourceChanged`, and reports the file failed, naming it and
    /// saying what to do.
    @Test func aFileRewrittenInPlaceWithItsTimePutBackIsNotSentAsVerified() async throws {
        try await TemporaryDirectory.with(prefix: "source-change") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk, seed: 9).path
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    let sending = TransferConfiguration(chunkSize: Self.chunk, window: Self.chunk, compression: .none)
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let info = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        let sending = Task {
                            try await sender.send([SourceFile(path: path, name: "video.bin")], to: [info.peerID])
                        }
                        let seen = try await Self.receiveByHand(on: bob, from: alice.localPeerID) {
                            try Self.rewriteInPlace(path, at: Self.chunk, count: 2 * Self.chunk)
                        }
                        #expect(seen.fileEnds == 0, "no fileEnd for a file that changed (it would verify)")
                        #expect(seen.sourceChanged == [0])
                        let outcome = try #require(try await sending.value.first)
                        #expect(outcome.filesFailed == 1 && outcome.filesSucceeded == 0, "\(outcome)")
                        #expect(!outcome.isSuccess)
                    }
                }
            }
        }
    }

    /// A broadcast to two hand-driven receivers: the chunk source reads each chunk once for both, and a change seen
    /// by either peer's read fails the file for both; neither gets a `fileEnd`.
    @Test func aBroadcastFileRewrittenInPlaceIsGivenUpForEveryPeer() async throws {
        try await TemporaryDirectory.with(prefix: "source-change") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk, seed: 9).path
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: configuration("carol"), reactor: reactor) { carol in
                    try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                        let sending = TransferConfiguration(
                            chunkSize: Self.chunk, window: Self.chunk, compression: .none)
                        try await TransferEngine.run(session: alice, configuration: sending) { sender in
                            var peers: [PeerID] = []
                            for session in [bob, carol] {
                                let info = try await alice.connect(
                                    toAddress: .ipv4(.loopback, port: await session.listenPort), timeout: .seconds(30))
                                peers.append(info.peerID)
                            }
                            let sending = Task {
                                try await sender.send([SourceFile(path: path, name: "video.bin")], to: peers)
                            }
                            // Carol holds her first acknowledgement until the file was rewritten.
                            let (rewritten, done) = AsyncStream.makeStream(of: Void.self)
                            async let bobSaw = Self.receiveByHand(on: bob, from: alice.localPeerID) {
                                try Self.rewriteInPlace(path, at: Self.chunk, count: 2 * Self.chunk)
                                done.finish()
                            }
                            async let carolSaw = Self.receiveByHand(on: carol, from: alice.localPeerID) {
                                for await _ in rewritten {}
                            }
                            for seen in try await [bobSaw, carolSaw] {
                                #expect(seen.fileEnds == 0 && seen.sourceChanged == [0], "\(seen)")
                            }
                            let outcomes = try await sending.value
                            #expect(outcomes.count == 2)
                            for outcome in outcomes {
                                #expect(outcome.filesFailed == 1 && !outcome.isSuccess, "\(outcome)")
                            }
                        }
                    }
                }
            }
        }
    }

    /// A sender that gives up on a file (`fileResult` `sourceChanged` from the sender's side): the receiver ends the
    /// file with `sourceChanged`, publishes nothing of it, whatever comes after, and keeps no staged data, so that the
    /// next offer of the file (same name, size and time) starts from 0 instead of resuming a splice.
    @Test func aReceiverToldTheSourceChangedPublishesNothingAndKeepsNoStagedData() async throws {
        try await TemporaryDirectory.with(prefix: "source-change-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path) { mallory, bob in
                let data = (0..<(3 * Self.chunk)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(.offer(sender.offer([("video.bin", UInt64(data.count))])))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: Array(data[0..<Self.chunk]))
                try await sender.send(
                    .fileResult(
                        FileResult(
                            transferID: sender.transferID, fileIndex: 0, status: .sourceChanged,
                            detail: "video.bin changed while it was being sent")))
                // A sender that goes on anyway: the rest and a digest that matches what was sent.
                for start in stride(from: Self.chunk, to: data.count, by: Self.chunk) {
                    try await sender.sendChunk(
                        file: 0, offset: UInt64(start), raw: Array(data[start..<start + Self.chunk]))
                }
                try await sender.sendEnd(file: 0, of: data)
                let result = try #require(await sender.result())
                #expect(result.status == .sourceChanged, "\(result)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path) == [".ferry-staging"])
                #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path + "/.ferry-staging") == [])

                let again = HostileSender(session: mallory, receiver: bob)
                try await again.send(.offer(again.offer([("video.bin", UInt64(data.count))])))
                let reply = try #require(await again.reply())
                #expect(reply.accepted && reply.files.first?.resumeOffset == 0, "\(reply)")
            }
        }
    }

    /// What a hand-driven receiver saw.
    struct Seen {
        var fileEnds = 0
        var sourceChanged: [UInt32] = []
    }

    /// Accepts the offer, holds the first chunk's acknowledgement until `betweenChunks` ran, acknowledges every chunk,
    /// answers a `fileEnd` with `published` and a sender's `sourceChanged` with its own, until the file has a result.
    static func receiveByHand(
        on bob: Session, from alice: PeerID, betweenChunks: () async throws -> Void
    ) async throws -> Seen {
        var seen = Seen()
        var chunks = 0
        for await event in bob.transferEvents {
            guard case .frame(let frame, let peer) = event, peer == alice else { continue }
            let message = try TransferMessage(frame: frame)
            switch message {
            case .offer(let offer):
                let reply = OfferReply(
                    transferID: offer.transferID, accepted: true, reason: OfferDenyReason(rawValue: 0), detail: "",
                    codecs: [], files: [FileDecision(accepted: true, resumeOffset: 0)])
                _ = try await bob.sendTransferFrame([TransferMessage.offerReply(reply).frame.encoded()], to: alice)
            case .chunk(let chunk):
                chunks += 1
                if chunks == 1 { try await betweenChunks() }
                let ack = ChunkAck(
                    transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, status: .stored)
                _ = try await bob.sendTransferFrame([TransferMessage.chunkAck(ack).frame.encoded()], to: alice)
            case .fileEnd(let end):
                seen.fileEnds += 1
                let result = FileResult(
                    transferID: end.transferID, fileIndex: end.fileIndex, status: .published, detail: "video.bin")
                _ = try await bob.sendTransferFrame([TransferMessage.fileResult(result).frame.encoded()], to: alice)
                return seen
            case .fileResult(let result):
                seen.sourceChanged.append(result.fileIndex)
                #expect(result.status == .sourceChanged)
                let answer = FileResult(
                    transferID: result.transferID, fileIndex: result.fileIndex, status: .sourceChanged,
                    detail: result.detail)
                _ = try await bob.sendTransferFrame([TransferMessage.fileResult(answer).frame.encoded()], to: alice)
                return seen
            default:
                continue
            }
        }
        return seen
    }
}
