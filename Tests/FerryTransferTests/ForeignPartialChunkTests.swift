import FerrySession
import FerryWire
import Testing

@testable import FerryTransfer

/// What a foreign peer's short pieces cost the receiver: the bytes held for a file's next chunk are bounded by the
/// files under way, not by every file that ever got a piece (review of issue 29: a failed file kept them until its
/// transfer ended, so one byte to each of 10000 files of an offer pinned up to a chunk each).
@Suite(.serialized, .timeLimit(.minutes(2))) struct ForeignPartialChunkTests {
    @Test func theBytesHeldForAFilesNextChunkGoWhenTheFileFails() async throws {
        try await ForeignPeerReceiveTests.withReceiver { engine, _ in
            let phone = await ForeignUploader(engine: engine)
            let files = (0..<50).map { ForeignFile(path: "f\($0)", size: 200_000, sha256: nil) }
            let (id, reply) = await phone.offer(files)
            #expect(reply?.accepted == true)
            for file in 0..<50 { try await phone.peer.write([7][...], file: file, of: id) }
            let key = IncomingKey(peer: phone.peer.peerID, transferID: id)
            #expect(await engine.partialChunkBytesHeld(key) == 50)
            // Every file but the last fails (ended short); the last keeps the transfer, and its byte, under way.
            for file in 0..<49 {
                await #expect(throws: ForeignPieceError.incomplete) { try await phone.peer.endFile(file, of: id) }
            }
            #expect(await engine.partialChunkBytesHeld(key) == 1, "bytes still held for the 49 failed files")
        }
    }
}

extension TransferEngine {
    /// The bytes a transfer's files hold for their next chunk; nil once the transfer is gone.
    fileprivate func partialChunkBytesHeld(_ key: IncomingKey) -> Int? {
        incoming[key]?.files.reduce(0) { $0 + $1.partialChunk.count }
    }
}
