import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// `zstdPrefixed` chunks (PROTOCOL.md 11.2, 11.10 rule 3): compressed with the file's previous chunk as prefix, sent
/// only right after that chunk; the receiver inflates them with the chunk it stored just before.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PrefixedChunkTests {
    static let chunk = Limits.minChunkSize

    /// A file whose chunks are all one random block: alone a chunk does not shrink at all; with the chunk before it
    /// as prefix it is a few bytes.
    static func repeatedRandom(chunks: Int) -> [UInt8] {
        var generator = SplitMix64(seed: 11)
        let block = generator.bytes(count: chunk)
        return Array((0..<chunks).map { _ in block }.joined())
    }

    /// End to end through two engines: every chunk after the first goes prefixed (the wire carries little more than
    /// the first chunk, which random bytes cannot do otherwise), and the file arrives as it was.
    @Test func anEngineSendsEachChunkAfterTheFirstWithItsPreviousChunkAsPrefix() async throws {
        try await TemporaryDirectory.with(prefix: "prefixed-src") { source in
            try await TemporaryDirectory.with(prefix: "prefixed-in") { inbox in
                let bytes = Self.repeatedRandom(chunks: 6)
                let url = source.url.appendingPathComponent("repeated.bin")
                try Data(bytes).write(to: url)
                try await TransferEngineTests.withEngines(inbox: inbox.path, chunkSize: Self.chunk, compression: .zstd)
                {
                    _, sender, bob in
                    let outcome = try #require(
                        try await sender.send([SourceFile(path: url.path, name: "repeated.bin")], to: [bob]).first)
                    #expect(outcome.isSuccess, "\(outcome)")
                    #expect(outcome.wireBytes < UInt64(2 * Self.chunk), "wire bytes \(outcome.wireBytes)")
                }
                #expect(try Data(contentsOf: inbox.url.appendingPathComponent("repeated.bin")) == Data(bytes))
            }
        }
    }

    /// A hostile sender: the first chunk of a file prefixed (there is no previous chunk), and a chunk prefixed right
    /// after a corrupt one (what was stored before it is not its previous chunk), each close the link uninflated;
    /// a chunk prefixed right after its previous chunk is stored and the file published.
    @Test(arguments: ["first chunk", "after a corrupt chunk", "honest"])
    func aPrefixedChunkNeedsItsPreviousChunkStoredJustBefore(_ case: String) async throws {
        let bytes = Self.repeatedRandom(chunks: 2)
        let first = Array(bytes[..<Self.chunk])
        let second = Array(bytes[Self.chunk...])
        let prefixed = try #require(ChunkCompressor.compress(second, level: 1, prefix: first))
        try await TemporaryDirectory.with(prefix: "prefixed-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                var offer = sender.offer([("repeated.bin", UInt64(bytes.count))])
                offer.codecs = [.zlib, .zstd, .zstdPrefixed]
                try await sender.send(.offer(offer))
                let reply = try #require(await sender.reply())
                #expect(reply.accepted && reply.codecs.contains(.zstdPrefixed))
                switch `case` {
                case "first chunk":
                    try await sender.sendChunk(file: 0, offset: 0, raw: first, codec: .zstdPrefixed, data: prefixed)
                    #expect(await sender.linkClosed())
                    #expect(await engine.probe.inflatedChunks == 0)
                case "after a corrupt chunk":
                    try await sender.sendChunk(file: 0, offset: 0, raw: first)
                    #expect(try #require(await sender.ack()).status == .stored)
                    // The second chunk with a digest that does not match: corrupt.
                    try await sender.sendChunk(file: 0, offset: UInt64(Self.chunk), raw: first.reversed(), data: second)
                    #expect(try #require(await sender.ack()).status == .corrupt)
                    try await sender.sendChunk(
                        file: 0, offset: UInt64(Self.chunk), raw: second, codec: .zstdPrefixed, data: prefixed)
                    #expect(await sender.linkClosed())
                    #expect(await engine.probe.inflatedChunks == 0)
                default:
                    try await sender.sendChunk(file: 0, offset: 0, raw: first)
                    #expect(try #require(await sender.ack()).status == .stored)
                    try await sender.sendChunk(
                        file: 0, offset: UInt64(Self.chunk), raw: second, codec: .zstdPrefixed, data: prefixed)
                    #expect(try #require(await sender.ack()).status == .stored)
                    #expect(await engine.probe.inflatedChunks == 1)
                    try await sender.sendEnd(file: 0, of: bytes)
                    #expect(try #require(await sender.result()).status == .published)
                }
            }
            let published = try? Data(contentsOf: inbox.url.appendingPathComponent("repeated.bin"))
            #expect((published == Data(bytes)) == (`case` == "honest"))
        }
    }
}

/// `--compress auto` to a peer on loopback: the ends share the CPU and the link is a memory copy, so nothing is
/// compressed (ferry-bench compare row 3: text went at 0.4-0.8x random bytes); forced modes still compress there.
@Suite(.serialized, .timeLimit(.minutes(2))) struct LoopbackCompressionTests {
    @Test(arguments: [CompressionMode.auto, .zstd])
    func autoSendsRawToAPeerOnLoopback(_ mode: CompressionMode) async throws {
        try await TemporaryDirectory.with(prefix: "loopback-src") { source in
            try await TemporaryDirectory.with(prefix: "loopback-in") { inbox in
                let text = try TestFiles(in: source).text("t.txt", size: 300_000)
                try await TransferEngineTests.withEngines(inbox: inbox.path, chunkSize: 65_536, compression: mode) {
                    _, sender, bob in
                    let outcome = try #require(
                        try await sender.send([SourceFile(path: text.path, name: "t.txt")], to: [bob]).first)
                    #expect(outcome.isSuccess, "\(outcome)")
                    #expect((outcome.wireBytes == outcome.bytes) == (mode == .auto), "\(outcome.wireBytes)")
                }
            }
        }
    }

    @Test func loopbackAddresses() {
        #expect(TransferEngine.isLoopback(.ipv4(.loopback, port: 1)))
        #expect(TransferEngine.isLoopback(.ipv4(IPv4Address(rawValue: 0x7f00_0102), port: 1)))
        #expect(!TransferEngine.isLoopback(.ipv4(IPv4Address(rawValue: 0x0a4e_0002), port: 1)))
        #expect(TransferEngine.isLoopback(.ipv6(IPv6Address(high: 0, low: 1), port: 1, scopeID: 0)))
        #expect(TransferEngine.isLoopback(.ipv6(IPv6Address(high: 0, low: 0xffff_7f00_0001), port: 1, scopeID: 0)))
        #expect(!TransferEngine.isLoopback(.ipv6(IPv6Address(high: 0, low: 0xffff_0a00_0001), port: 1, scopeID: 0)))
        #expect(!TransferEngine.isLoopback(nil))
    }
}
