import FerryWire
import Testing

@testable import FerryStateMachines

/// PROTOCOL.md 11.11 (swarmRequest): a request for a chunk that does not exist, a `fileIndex` not in the offer or a
/// `chunkIndex` at or past the file's chunk count, is refused `notHeld` by a member and is a protocol error at S.
@Suite struct SwarmRequestBoundsTests {
    /// One file of 10 chunks; indices the wire allows but the offer does not have.
    static let outside = [
        SwarmChunk(file: 0, index: 10), SwarmChunk(file: 0, index: Int(UInt32.max)), SwarmChunk(file: 1, index: 0),
        SwarmChunk(file: Int(UInt32.max), index: 0),
    ]

    @Test(arguments: outside)
    func aMemberRefusesAChunkThatDoesNotExistAsNotHeld(_ chunk: SwarmChunk) throws {
        var fetcher = SwarmFetcher(me: 0, memberCount: 3, chunkCounts: [10], accepted: [true], resumedChunks: [0])
        _ = fetcher.membersReceived([0, 1, 2])
        _ = fetcher.linkUp(1)
        _ = fetcher.linkUp(2)
        // Chunk 9 is held, verified: fetched from member 2 against the sender's digest.
        let digest = [UInt8](repeating: 0xAB, count: 32)
        let held = SwarmChunk(file: 0, index: 9)
        _ = try fetcher.digestsReceived(file: 0, first: 9, entries: [(seed: 2, sha256: digest)])
        _ = try fetcher.haveReceived(from: 2, [held])
        _ = fetcher.relayedChunkArrived(from: 2, held, sha256: digest)
        _ = fetcher.relayedChunkStored(held)
        #expect(fetcher.holds(held))
        #expect(fetcher.requestReceived(from: 1, chunk) == [.refuse(chunk, to: 1, reason: .notHeld)])
        // The same member's request for a chunk this member holds is served: the refusal was for the chunk.
        #expect(fetcher.requestReceived(from: 1, held) == [.serve(held, to: 1)])
    }

    @Test(arguments: outside)
    func theSenderTakesARequestForAChunkThatDoesNotExistAsAProtocolError(_ chunk: SwarmChunk) throws {
        var seeder = SwarmSeeder(memberCount: 2, sizes: [10 * 1024], chunkSize: 1024, window: 4096)
        for member in 0..<2 {
            try seeder.replyReceived(member: member, relay: true, accepted: [true], resumeOffsets: [0])
        }
        _ = seeder.repliesComplete()
        #expect(throws: TransferProtocolError.self) { try seeder.requestReceived(member: 1, chunk: chunk) }
    }
}
