import FerrySession
import FerryTestSupport
import FerryWire
import Testing

@testable import FerryTransfer

/// PROTOCOL.md 11.10 rule 3: a chunk in a codec the reply did not agree on (a known one left out of the reply's set,
/// or one the receiver does not know at all) is a protocol error that closes the link, never a `corrupt`
/// acknowledgement; the `transferCancel` names the codec once ("codec 9", not "codec codec 9").
@Suite(.serialized, .timeLimit(.minutes(2))) struct UnagreedCodecTests {
    @Test(arguments: [
        (Codec.zstd, "a chunk in codec zstd, which was not agreed"),
        (Codec(rawValue: 9), "a chunk in codec 9, which was not agreed"),
    ])
    func aChunkInACodecNotAgreedIsAProtocolErrorThatClosesTheLink(codec: Codec, detail: String) async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path) { mallory, bob in
                let sender = HostileSender(session: mallory, receiver: bob)
                let raw = [UInt8](repeating: 0x41, count: 100)
                try await sender.send(.offer(sender.offer([("a.txt", UInt64(raw.count))])))  // codecs: zlib only
                let reply = try #require(await sender.reply())
                #expect(reply.accepted && !reply.codecs.contains(codec: codec))
                try await sender.sendChunk(file: 0, offset: 0, raw: raw, codec: codec, data: Array(raw.prefix(50)))
                var acks: [ChunkAck] = []
                var cancel: TransferCancel?
                while let message = await sender.next() {
                    if case .chunkAck(let ack) = message { acks.append(ack) }
                    if case .cancel(let seen) = message { cancel = seen }
                }
                #expect(acks.isEmpty, "no acknowledgement, corrupt or other: \(acks)")
                #expect(cancel?.reason == .protocolError)
                #expect(cancel?.detail == detail)
            }
        }
    }
}
