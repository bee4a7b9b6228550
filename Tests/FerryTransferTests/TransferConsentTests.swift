import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// Consent before bytes (promise 3) and bounded decompression (promise 5), against a hostile in-process sender.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TransferConsentTests {
    /// 8 MiB of zeros as raw deflate: about 8 KiB on the wire, 128 times a 64 KiB chunk once inflated.
    static let bomb: [UInt8] = ChunkCompressor.compress([UInt8](repeating: 0, count: 8 << 20), algorithm: .zlib) ?? []

    /// Entries of `inbox` other than the staging folder, and the staging folder's entries.
    static func contents(of inbox: String) throws -> (visible: [String], staged: [String]) {
        let entries = try FileManager.default.contentsOfDirectory(atPath: inbox)
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.ferry-staging")) ?? []
        return (entries.filter { $0 != ".ferry-staging" }, staged)
    }

    @Test func dataForAnOfferStillBeingAskedIsNeverWrittenNorInflatedAndClosesTheLink() async throws {
        #expect(Self.bomb.count > 0 && Self.bomb.count < Limits.minChunkSize)
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .ask) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(.offer(sender.offer([("bomb.bin", UInt64(Limits.minChunkSize))])))
                // Straight after the offer, while the receiver is still asking (nobody answers here).
                try await sender.sendChunk(
                    file: 0, offset: 0, raw: [UInt8](repeating: 0, count: Limits.minChunkSize), codec: .zlib,
                    data: Self.bomb)
                #expect(await sender.linkClosed())
                #expect(await engine.probe.inflatedChunks == 0)
                #expect(await engine.receivesNothing, "the offer is withdrawn with the link")
            }
            let (visible, staged) = try Self.contents(of: inbox.path)
            #expect(visible.isEmpty, "\(visible)")
            #expect(staged.isEmpty, "\(staged)")
        }
    }

    @Test func aBombInAnAcceptedTransferIsRefusedWithinItsChunkAndTheFileStillArrives() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                let zeros = [UInt8](repeating: 0, count: Limits.minChunkSize)
                try await sender.send(.offer(sender.offer([("zeros.bin", UInt64(zeros.count))])))
                let reply = try #require(await sender.reply())
                #expect(reply.accepted && reply.codecs.contains(.zlib))
                try await sender.sendChunk(file: 0, offset: 0, raw: zeros, codec: .zlib, data: Self.bomb)
                let refused = try #require(await sender.ack())
                #expect(refused.status == .corrupt && refused.offset == 0)
                #expect(await engine.probe.inflatedChunks == 1)
                // The link lives on: the honest copy of the chunk is stored and the file published.
                try await sender.sendChunk(file: 0, offset: 0, raw: zeros)
                #expect(try #require(await sender.ack()).status == .stored)
                try await sender.sendEnd(file: 0, of: zeros)
                #expect(try #require(await sender.result()).status == .published)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/zeros.bin")).count == Limits.minChunkSize)
        }
    }

    @Test func aChunkLongerThanTheOfferedChunkSizeClosesTheLinkUninflated() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(.offer(sender.offer([("big.bin", 4 << 20)])))
                #expect(try #require(await sender.reply()).accepted)
                // Declares 4 MiB (the wire maximum) in a transfer of 64 KiB chunks.
                try await sender.sendChunk(
                    file: 0, offset: 0, raw: [UInt8](repeating: 0, count: Limits.maxChunkSize), codec: .zlib,
                    data: Self.bomb)
                #expect(await sender.linkClosed())
                #expect(await engine.probe.inflatedChunks == 0)
            }
            #expect(try Self.contents(of: inbox.path).visible.isEmpty)
        }
    }
}
