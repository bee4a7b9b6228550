import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerryTransfer

/// The sender's per-file `resumedBytes` (docs/EVENTS.md `fileFinished`) is what the receiver's reply resumed that file
/// from: the bytes not sent again. It agrees with the transfer's total in `finished`, whether the file was published
/// or failed. (It was 0 for every published file, and the bytes sent so far for a failed one.)
@Suite(.serialized, .timeLimit(.minutes(2))) struct SenderResumedBytesTests {
    static let chunk = Limits.minChunkSize

    @Test(arguments: [FerryWire.FileStatus.published, .writeFailed])
    func aResumedFileReportsTheBytesItDidNotSendAgain(status: FerryWire.FileStatus) async throws {
        try await TemporaryDirectory.with(prefix: "resumed-bytes") { folder in
            let url = try TestFiles(in: folder).random("video.bin", size: 3 * Self.chunk + 100, seed: 3)
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    let sending = TransferConfiguration(chunkSize: Self.chunk, compression: .none)
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let info = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        let events = Task {
                            var files: [FileOutcome] = []
                            for await event in sender.events {
                                if case .fileFinished(let outcome) = event { files.append(outcome) }
                                if case .finished = event { break }
                            }
                            return files
                        }
                        let sending = Task {
                            try await sender.send([SourceFile(path: url.path, name: "video.bin")], to: [info.peerID])
                        }
                        let sent = try await Self.resumeByHand(
                            on: bob, from: alice.localPeerID, at: UInt64(2 * Self.chunk), answering: status)
                        #expect(sent == [UInt64(2 * Self.chunk), UInt64(3 * Self.chunk)], "only what the resume left")
                        let outcome = try #require(try await sending.value.first)
                        #expect(outcome.resumedBytes == UInt64(2 * Self.chunk), "\(outcome)")
                        let files = await events.value
                        #expect(files.map(\.resumedBytes) == [UInt64(2 * Self.chunk)], "\(files)")
                        #expect(files.map(\.resumedBytes).reduce(0, +) == outcome.resumedBytes)
                    }
                }
            }
        }
    }

    /// Accepts the one offered file from `resumeOffset`, acknowledges every chunk `stored`, and answers its `fileEnd`
    /// with `status`. Returns the offsets of the chunks that came.
    static func resumeByHand(
        on bob: Session, from alice: PeerID, at resumeOffset: UInt64, answering status: FerryWire.FileStatus
    ) async throws -> [UInt64] {
        var offsets: [UInt64] = []
        for await event in bob.transferEvents {
            guard case .frame(let frame, let peer) = event, peer == alice else { continue }
            switch try TransferMessage(frame: frame) {
            case .offer(let offer):
                let reply = OfferReply.accepting(
                    offer.transferID, codecs: [], files: [FileDecision(accepted: true, resumeOffset: resumeOffset)])
                try await bob.sendTransferFrame([TransferMessage.offerReply(reply).frame.encoded()], to: alice)
            case .chunk(let chunk):
                offsets.append(chunk.offset)
                let ack = ChunkAck(
                    transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, status: .stored)
                try await bob.sendTransferFrame([TransferMessage.chunkAck(ack).frame.encoded()], to: alice)
            case .fileEnd(let end):
                let result = FileResult(
                    transferID: end.transferID, fileIndex: end.fileIndex, status: status,
                    detail: status == .published ? "video.bin" : "no room")
                try await bob.sendTransferFrame([TransferMessage.fileResult(result).frame.encoded()], to: alice)
                return offsets
            default:
                continue
            }
        }
        return offsets
    }
}
