import FerrySecurity
import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The receive path driven by an adapter of another protocol (`ForeignPeer`, docs/ARCHITECTURE.md "How another
/// protocol uses the receive path"): the promises of a ferry transfer, kept for a peer that has no ferry link.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ForeignPeerReceiveTests {
    /// Runs `body` with an engine receiving into a new directory under `policy`, in chunks of 64 KiB (so that a
    /// few hundred KiB cross several chunk boundaries).
    static func withReceiver(
        policy: OfferPolicy = .all, _ body: (_ engine: TransferEngine, _ inbox: String) async throws -> Void
    ) async throws {
        try await TemporaryDirectory.with(prefix: "foreign-in") { inbox in
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
                let configuration = TransferConfiguration(
                    receiveDirectory: inbox.path, offerPolicy: policy, chunkSize: Limits.minChunkSize)
                try await TransferEngine.run(session: bob, configuration: configuration) { engine in
                    try await body(engine, inbox.path)
                }
            }
        }
    }

    /// The visible entries of `inbox` and the entries of its staging folder.
    static func contents(_ inbox: String) throws -> (visible: [String], staged: [String]) {
        try TransferConsentTests.contents(of: inbox)
    }

    /// The next event of `engine` that `pick` takes.
    static func event<T>(_ engine: TransferEngine, _ pick: (TransferEvent) -> T?) async -> T? {
        for await event in engine.events {
            if let picked = pick(event) { return picked }
        }
        return nil
    }

    static let photo = TestFiles.randomBytes(count: 300_000, seed: 29)

    @Test func anUploadWithItsSHA256IsPublishedVerifiedAndSaysWhoSentIt() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let sha = SHA256Hasher.digest(Self.photo)
            let (id, reply) = await phone.offer([ForeignFile(path: "DCIM/photo.jpg", size: 300_000, sha256: sha)])
            #expect(reply?.accepted == true)
            // Pieces that straddle the 64 KiB chunks: 1 byte, then 70 000, then 100 000 at a time.
            try await phone.upload(Self.photo, of: id, pieces: [1, 70_000, 100_000])
            let result = try #require(await phone.result(of: 0, id))
            #expect(result.status == .published, "\(result)")
            let outcome = try #require(
                await Self.event(engine) { if case .fileFinished(let o) = $0 { o } else { nil } })
            #expect(outcome.verification == .sha256)
            #expect(outcome.digest == sha)
            #expect(outcome.peer.protocolName == "localsend" && outcome.peer.peerID.isForeign)
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/DCIM/photo.jpg")) == Data(Self.photo))
            let finished = try #require(await Self.event(engine) { if case .finished(let o) = $0 { o } else { nil } })
            #expect(finished.isSuccess && finished.keptBytes == 0)
            #expect(try Self.contents(inbox).staged.isEmpty)
        }
    }

    @Test func aWrongSHA256PublishesNothingAndKeepsNothingStaged() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            var wrong = SHA256Hasher.digest(Self.photo)
            wrong[0] ^= 1
            let (id, reply) = await phone.offer([ForeignFile(path: "photo.jpg", size: 300_000, sha256: wrong)])
            #expect(reply?.accepted == true)
            try await phone.upload(Self.photo, of: id)
            let result = try #require(await phone.result(of: 0, id))
            #expect(result.status == .hashMismatch, "\(result)")
            _ = await Self.event(engine) { if case .finished(let o) = $0 { o } else { nil } }
            let (visible, staged) = try Self.contents(inbox)
            #expect(visible.isEmpty, "\(visible)")
            #expect(staged.isEmpty, "\(staged)")
        }
    }

    @Test func aFileWithoutADigestIsPublishedAndMarkedCheckedBySizeOnly() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let (id, reply) = await phone.offer([ForeignFile(path: "old-app.bin", size: 300_000, sha256: nil)])
            #expect(reply?.accepted == true)
            try await phone.upload(Self.photo, of: id)
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            let outcome = try #require(
                await Self.event(engine) { if case .fileFinished(let o) = $0 { o } else { nil } })
            #expect(outcome.verification == .size)
            #expect(outcome.publishedName == "old-app.bin")
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/old-app.bin")) == Data(Self.photo))
        }
    }

    @Test func aRefusedOfferStoresNothingAndItsPiecesAreRefused() async throws {
        try await Self.withReceiver(policy: .ask) { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let asking = Task { await phone.offer([ForeignFile(path: "photo.jpg", size: 300_000, sha256: nil)]) }
            let offer = try #require(
                await Self.event(engine) { if case .offerReceived(let o) = $0 { o } else { nil } })
            #expect(offer.peer.protocolName == "localsend" && offer.files.map(\.path) == ["photo.jpg"])
            await engine.respond(to: offer.transferID, from: offer.peer.peerID, accept: false)
            let (id, reply) = await asking.value
            #expect(id == offer.transferID)
            #expect(reply?.accepted == false && reply?.reason == .deniedByUser)
            await #expect(throws: ForeignPieceError.notAccepted) { try await phone.upload(Self.photo, of: id) }
            let (visible, staged) = try Self.contents(inbox)
            #expect(visible.isEmpty && staged.isEmpty, "\(visible) \(staged)")
        }
    }

    @Test func piecesBeforeConsentAreRefusedAndNothingIsStaged() async throws {
        try await Self.withReceiver(policy: .ask) { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let asking = Task { await phone.offer([ForeignFile(path: "photo.jpg", size: 300_000, sha256: nil)]) }
            let offer = try #require(
                await Self.event(engine) { if case .offerReceived(let o) = $0 { o } else { nil } })
            // The offer is being asked: its body is not taken.
            await #expect(throws: ForeignPieceError.notAccepted) {
                try await phone.upload(Self.photo, of: offer.transferID, end: false)
            }
            #expect(try Self.contents(inbox).staged.isEmpty)
            await engine.respond(to: offer.transferID, from: offer.peer.peerID, accept: true)
            let (id, reply) = await asking.value
            #expect(reply?.accepted == true)
            // Once accepted, the whole body from its start is taken and published.
            try await phone.upload(Self.photo, of: id)
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/photo.jpg")) == Data(Self.photo))
        }
    }

    @Test func aDetachMidFilePublishesNothingAndRemovesItsStagedData() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let (id, reply) = await phone.offer([ForeignFile(path: "video.mp4", size: 300_000, sha256: nil)])
            #expect(reply?.accepted == true)
            try await phone.upload(Array(Self.photo[..<200_000]), of: id, end: false)
            await phone.peer.detach(reason: "the connection was reset")
            let finished = try #require(await Self.event(engine) { if case .finished(let o) = $0 { o } else { nil } })
            #expect(finished.stop == .linkLost && finished.filesFailed == 1 && finished.keptBytes == 0)
            #expect(await phone.untilDetached().isEmpty)
            await #expect(throws: ForeignPieceError.notAccepted) {
                try await phone.upload(Array(Self.photo[200_000...]), of: id)
            }
            let (visible, staged) = try Self.contents(inbox)
            #expect(visible.isEmpty, "\(visible)")
            #expect(staged.isEmpty, "no resume for a foreign peer: \(staged)")
        }
    }

    @Test func namesThatLeaveTheDirectoryAreRefusedByTheSameValidator() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            for name in ["../escape.txt", "/etc/cron.d/x", "a/../../b", ".ferry-staging/x", "ok/\u{202E}gpj.exe"] {
                let (_, reply) = await phone.offer([ForeignFile(path: name, size: 10, sha256: nil)])
                #expect(
                    reply?.accepted == false && reply?.reason == .invalidOffer, "\(name): \(String(describing: reply))")
            }
            let (visible, staged) = try Self.contents(inbox)
            #expect(visible.isEmpty && staged.isEmpty, "\(visible) \(staged)")
        }
    }

    @Test func anIdenticalFileAlreadyThereIsDetectedNotPublishedAgain() async throws {
        try await Self.withReceiver { engine, inbox in
            try Data(Self.photo).write(to: URL(fileURLWithPath: inbox + "/photo.jpg"))
            let phone = await ForeignUploader(engine: engine)
            let sha = SHA256Hasher.digest(Self.photo)
            for digest in [sha, nil] {  // by the sender's SHA-256, and by the one computed for a size-only file
                let (id, reply) = await phone.offer([ForeignFile(path: "photo.jpg", size: 300_000, sha256: digest)])
                #expect(reply?.accepted == true)
                try await phone.upload(Self.photo, of: id)
                let result = try #require(await phone.result(of: 0, id))
                #expect(result.status == .published && result.identical, "\(result)")
            }
            let (visible, staged) = try Self.contents(inbox)
            #expect(visible == ["photo.jpg"], "\(visible)")
            #expect(staged.isEmpty, "\(staged)")
        }
    }

    @Test func aLargeBodyIsTakenOnlyAsFastAsItIsWritten() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let size = IncomingTransfers.maxQueuedBytes + 3 * Limits.minChunkSize
            let body = [UInt8](repeating: 7, count: size)
            let (id, reply) = await phone.offer([ForeignFile(path: "big.bin", size: UInt64(size), sha256: nil)])
            #expect(reply?.accepted == true)
            // Nothing completes: the writes queued stay counted, so the body must wait for room.
            await engine.holdCompletions()
            let writing = Task { try await phone.upload(body, of: id, pieces: [1 << 20]) }
            // Until the body waits for room, or its transfer is gone (the engine cut a peer past its bound).
            while await engine.probe.foreignRoomWaits == 0, await !engine.receivesNothing { await Task.yield() }
            #expect(await engine.probe.foreignRoomWaits > 0)
            #expect(await engine.probe.largestQueuedBytes <= IncomingTransfers.maxQueuedBytes)
            await engine.releaseCompletions()
            try await writing.value
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            #expect(await engine.probe.largestQueuedBytes <= IncomingTransfers.maxQueuedBytes)
            let status = try FileManager.default.attributesOfItem(atPath: inbox + "/big.bin")
            #expect((status[.size] as? Int) == size)
        }
    }

    @Test func aCancelMidFilePublishesWhatWasVerifiedAndRemovesTheRest() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let (id, reply) = await phone.offer([
                ForeignFile(path: "a.jpg", size: 300_000, sha256: SHA256Hasher.digest(Self.photo)),
                ForeignFile(path: "b.mp4", size: 300_000, sha256: nil),
            ])
            #expect(reply?.accepted == true)
            try await phone.upload(Self.photo, file: 0, of: id)
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            try await phone.upload(Array(Self.photo[..<150_000]), file: 1, of: id, end: false)
            await phone.peer.cancel(id, reason: .cancelledByUser)
            let finished = try #require(await Self.event(engine) { if case .finished(let o) = $0 { o } else { nil } })
            #expect(finished.stop == .cancelledByPeer(.cancelledByUser), "\(String(describing: finished.stop))")
            #expect(finished.filesSucceeded == 1 && finished.filesFailed == 1 && finished.keptBytes == 0)
            let (visible, staged) = try Self.contents(inbox)
            #expect(visible == ["a.jpg"], "\(visible)")
            #expect(staged.isEmpty, "\(staged)")
        }
    }

    @Test func twoFilesOfOneTransferTakenAtOnceArePublishedBoth() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let other = TestFiles.randomBytes(count: 200_001, seed: 30)
            let (id, reply) = await phone.offer([
                ForeignFile(path: "a.bin", size: 300_000, sha256: SHA256Hasher.digest(Self.photo)),
                ForeignFile(path: "b.bin", size: 200_001, sha256: SHA256Hasher.digest(other)),
            ])
            #expect(reply?.accepted == true)
            async let first: Void = phone.upload(Self.photo, file: 0, of: id, pieces: [30_000])
            async let second: Void = phone.upload(other, file: 1, of: id, pieces: [50_000])
            _ = try await (first, second)
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            #expect(try #require(await phone.result(of: 1, id)).status == .published)
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/a.bin")) == Data(Self.photo))
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/b.bin")) == Data(other))
        }
    }

    @Test func aFerryPeerClaimingAForeignPeersIDIsCutAtItsFirstTransferFrame() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let port = Int(await engine.session.listenPort)
            let mallory = try await StrangerLink.open(port: port)
            defer { mallory.close() }
            let hello = Hello(
                peerID: phone.peer.peerID, deviceID: mallory.identity.deviceID, mode: .peer,
                capabilities: [.transfers], listenPort: 0, datagramPort: 0, sessionID: "unit", displayName: "mallory")
            try await mallory.send(SessionMessage.hello(hello).encoded() + SessionMessage.connectionRequest.encoded())
            // Connected (accepted) first, so that only the transfer engine can refuse what follows.
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            var accepted = false
            while !accepted {
                let bytes = try await mallory.stream.read(maxBytes: 64 << 10)
                try #require(!bytes.isEmpty, "the link closed before it was accepted")
                decoder.append(bytes)
                while let frame = try decoder.nextFrame() {
                    if case .accept = try SessionMessage(frame: frame) { accepted = true }
                }
            }
            let offer = Offer(
                transferID: TransferID.random(), chunkSize: UInt32(Limits.minChunkSize), codecs: [],
                files: [OfferedFile(path: "x.txt", size: 1, modificationTime: FileTime(seconds: 0))])
            try await mallory.send(TransferMessage.offer(offer).frame.encoded())
            let (messages, closedByPeer) = await mallory.messagesUntilClosed()
            #expect(closedByPeer)
            #expect(!messages.contains { if case .transfer = $0 { true } else { false } }, "\(messages)")
            #expect(await engine.receivesNothing)
            // The foreign peer of that ID is untouched: its offers go on.
            let (_, reply) = await phone.offer([ForeignFile(path: "photo.jpg", size: 300_000, sha256: nil)])
            #expect(reply?.accepted == true)
            #expect(try Self.contents(inbox).visible.isEmpty)
        }
    }

    @Test func anEmptyFileIsVerifiedByTheSHA256OfNothingAndPublished() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let empty = SHA256Hasher.digest([UInt8]())
            let (id, reply) = await phone.offer([
                ForeignFile(path: "empty.txt", size: 0, sha256: empty),
                ForeignFile(path: "wrong-empty.txt", size: 0, sha256: [UInt8](repeating: 1, count: 32)),
            ])
            #expect(reply?.accepted == true)
            try await phone.peer.endFile(0, of: id)
            try await phone.peer.endFile(1, of: id)
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            #expect(try #require(await phone.result(of: 1, id)).status == .hashMismatch)
            #expect(try Self.contents(inbox).visible == ["empty.txt"])
        }
    }

    @Test func aFileEndedShortOrAPieceTooLongIsRefusedAndPublishesNothing() async throws {
        try await Self.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let (id, reply) = await phone.offer([
                ForeignFile(path: "short.bin", size: 300_000, sha256: nil),
                ForeignFile(path: "long.bin", size: 1000, sha256: nil),
            ])
            #expect(reply?.accepted == true)
            await #expect(throws: ForeignPieceError.incomplete) {
                try await phone.upload(Array(Self.photo[..<299_999]), file: 0, of: id)
            }
            #expect(try #require(await phone.result(of: 0, id)).status == .cancelled)
            await #expect(throws: ForeignPieceError.tooLong) {
                try await phone.upload(Array(Self.photo[..<1001]), file: 1, of: id)
            }
            try await phone.upload(Array(Self.photo[..<1000]), file: 1, of: id)
            #expect(try #require(await phone.result(of: 1, id)).status == .published)
            #expect(try Self.contents(inbox).visible == ["long.bin"])
            _ = await Self.event(engine) { if case .finished(let o) = $0 { o } else { nil } }
            #expect(try Self.contents(inbox).staged.isEmpty)
        }
    }
}
