import Dispatch
import FerrySecurity
import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The edges of the receive path's seam for other protocols (`ForeignPeer`), from the review of issue 29: an offer
/// whose caller gives up, a detach while an offer is being accepted, a file ended twice, the answers an adapter is
/// sent, the bytes a peer's short pieces hold, and a ferry link that claims an ID of the foreign range.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ForeignPeerSeamTests {
    typealias Receive = ForeignPeerReceiveTests

    @Test func cancellingAnOfferWithdrawsItsAskAndStoresNothing() async throws {
        try await Receive.withReceiver(policy: .ask) { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let peer = phone.peer
            let asking = Task { await peer.offer([ForeignFile(path: "photo.jpg", size: 300_000, sha256: nil)]) }
            let offer = try #require(
                await Receive.event(engine) { if case .offerReceived(let o) = $0 { o } else { nil } })
            asking.cancel()
            // The prompt is withdrawn (the application is told the offer is gone), and the offer answers nothing.
            let withdrawn = try #require(
                await Receive.event(engine) { if case .denied(let id, _, _, let why) = $0 { (id, why) } else { nil } })
            #expect(withdrawn.0 == offer.transferID, "\(withdrawn)")
            let (id, reply) = await asking.value
            #expect(id == offer.transferID && reply == nil)
            let asksNothing = await engine.asksNothing
            let receivesNothing = await engine.receivesNothing
            #expect(asksNothing && receivesNothing)
            // An answer that comes after finds nothing to accept.
            await engine.respond(to: offer.transferID, from: offer.peer.peerID, accept: true)
            #expect(await engine.receivesNothing)
            let (visible, staged) = try Receive.contents(inbox)
            #expect(visible.isEmpty && staged.isEmpty, "\(visible) \(staged)")
        }
    }

    /// What this proves: an offer made once a detach has begun (it waits on the first transfer's publish) is not
    /// taken and no transfer is left behind. An offer already part-way through `acceptOffer` when the detach begins
    /// is `anOfferPartWayThroughAcceptanceWhenADetachBeginsIsNotAccepted` (held there by the probe's gates).
    @Test func anOfferMadeWhileADetachIsUnderWayIsNotAnsweredAndLeavesNoTransferBehind() async throws {
        try await Receive.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let small = [UInt8](Receive.photo[..<1000])
            let (first, reply) = await phone.offer([
                ForeignFile(path: "a.bin", size: 1000, sha256: SHA256Hasher.digest(small)),
                ForeignFile(path: "b.bin", size: 300_000, sha256: nil),
            ])
            #expect(reply?.accepted == true)
            // The publishing queue is held: the detach waits there (for the turn of a.bin) with the peer still
            // attached, and an offer comes meanwhile.
            let gate = DispatchSemaphore(value: 0)
            await engine.holdPublishing(gate)
            try await phone.upload(small, file: 0, of: first)
            let key = IncomingKey(peer: phone.peer.peerID, transferID: first)
            while await engine.isPublishing(key) != true { await Task.yield() }
            let peer = phone.peer
            let detaching = Task { await peer.detach(reason: "the connection was reset") }
            while await engine.isEnding(key) != true { await Task.yield() }
            let (_, late) = await peer.offer([ForeignFile(path: "late.bin", size: 10, sha256: nil)])
            gate.signal()
            await detaching.value
            // The first transfer's outcome comes once its queued writes were waited for; then nothing is left.
            _ = await Receive.event(engine) { if case .finished(let o) = $0, o.transferID == first { o } else { nil } }
            #expect(late == nil, "an offer of a peer being detached is answered: \(String(describing: late))")
            #expect(await engine.receivesNothing, "a transfer of the detached peer is left behind")
            #expect(try Receive.contents(inbox).staged.isEmpty)
        }
    }

    /// An offer part-way through `acceptOffer` when a detach begins: its record is still there, still asking and
    /// not ending (the detach has cancelled nothing yet), so only `isStillThisOffer`'s attached clause stops it.
    /// It is not accepted, its reservations are released, and once the detach ends it answers nothing.
    @Test func anOfferPartWayThroughAcceptanceWhenADetachBeginsIsNotAccepted() async throws {
        try await Receive.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let peer = phone.peer
            await engine.closeAcceptGate()
            await engine.closeDetachGate()
            let offering = Task { await peer.offer([ForeignFile(path: "b.bin", size: 1000, sha256: nil)]) }
            while await engine.acceptGateHolds == nil { await Task.yield() }
            let key = try #require(await engine.acceptGateHolds)
            let detaching = Task { await peer.detach(reason: "the connection was reset") }
            while await !engine.detachGateHolds { await Task.yield() }
            // The acceptance goes on while the detach waits before its first cancel.
            await engine.openAcceptGate()
            while await engine.probe.acceptancesStopped == 0, await engine.phase(of: key) == .asking {
                await Task.yield()
            }
            #expect(await engine.probe.acceptancesStopped == 1)
            #expect(await engine.phase(of: key) == .asking, "an offer of a peer being detached was accepted")
            await engine.openDetachGate()
            await detaching.value
            let (_, reply) = await offering.value
            #expect(reply == nil, "an offer of a peer being detached is answered: \(String(describing: reply))")
            #expect(await engine.receivesNothing, "a transfer of the detached peer is left behind")
            #expect(try Receive.contents(inbox).staged.isEmpty)
        }
    }

    @Test func aSecondEndOfAFileThrowsEndedAndTheTransferGoesOn() async throws {
        try await Receive.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let other = TestFiles.randomBytes(count: 1000, seed: 31)
            let (id, reply) = await phone.offer([
                ForeignFile(path: "a.bin", size: 300_000, sha256: SHA256Hasher.digest(Receive.photo)),
                ForeignFile(path: "b.bin", size: 1000, sha256: SHA256Hasher.digest(other)),
            ])
            #expect(reply?.accepted == true)
            // The writes do not complete: the first end is being verified when the second comes.
            await engine.holdCompletions()
            try await phone.upload(Receive.photo, file: 0, of: id)
            await #expect(throws: ForeignPieceError.ended) { try await phone.peer.endFile(0, of: id) }
            await engine.releaseCompletions()
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            try await phone.upload(other, file: 1, of: id)
            #expect(try #require(await phone.result(of: 1, id)).status == .published)
            #expect(try Receive.contents(inbox).visible == ["a.bin", "b.bin"])
        }
    }

    @Test func aStagedFileCreatedAheadBetweenRemovalAndReleaseIsRemovedToo() async throws {
        try await Receive.withReceiver { engine, inbox in
            let phone = await ForeignUploader(engine: engine)
            let (id, reply) = await phone.offer([ForeignFile(path: "a.bin", size: 1000, sha256: nil)])
            #expect(reply?.accepted == true)
            let key = IncomingKey(peer: phone.peer.peerID, transferID: id)
            let staged = try #require(await engine.stagedKey(of: 0, key))
            // The creation ahead of the file's first chunk lands after its staged data was removed, before the
            // reservation is released (it runs on another thread; here it is made to land there).
            await engine.createStagedBetweenRemovalAndRelease()
            await #expect(throws: ForeignPieceError.incomplete) {
                try await phone.upload(Array(Receive.photo[..<10]), of: id)
            }
            let left = FileManager.default.fileExists(atPath: inbox + "/.ferry-staging/" + staged)
            #expect(!left, "an empty staged file of a failed foreign file was left behind")
        }
    }

    @Test func answersCarryNoChunkAcknowledgements() async throws {
        try await Receive.withReceiver { engine, _ in
            let phone = await ForeignUploader(engine: engine)
            let (id, reply) = await phone.offer([ForeignFile(path: "a.bin", size: 300_000, sha256: nil)])
            #expect(reply?.accepted == true)
            try await phone.upload(Receive.photo, of: id)
            #expect(try #require(await phone.result(of: 0, id)).status == .published)
            let acks = await phone.seen.filter { if case .chunkAck = $0 { true } else { false } }
            #expect(acks.isEmpty, "\(acks.count) chunk acknowledgements nobody reads")
        }
    }

    @Test func bytesHeldForNextChunksCountAgainstTheQueuedBound() async throws {
        try await Receive.withReceiver { engine, _ in
            let phone = await ForeignUploader(engine: engine)
            // Each file gets a chunk less one byte: held for its next chunk, never written.
            let held = Limits.minChunkSize - 1
            let count = IncomingTransfers.maxQueuedBytes / held + 2
            let files = (0..<count).map {
                ForeignFile(path: "f\($0)", size: UInt64(2 * Limits.minChunkSize), sha256: nil)
            }
            let (id, reply) = await phone.offer(files)
            #expect(reply?.accepted == true)
            let peer = phone.peer
            let piece = [UInt8](repeating: 5, count: held)
            let writing = Task { () async throws in
                for file in 0..<count { try await peer.write(piece[...], file: file, of: id) }
            }
            // Until a piece waits for room, or every piece was taken (the bound not kept).
            while await engine.probe.foreignRoomWaits == 0, await engine.heldBytes(of: peer.peerID) < count * held {
                await Task.yield()
            }
            #expect(await engine.heldBytes(of: peer.peerID) <= IncomingTransfers.maxQueuedBytes)
            #expect(await engine.probe.foreignRoomWaits > 0)
            await peer.detach(reason: "done")
            _ = await writing.result
            _ = await Receive.event(engine) { if case .finished(let o) = $0 { o } else { nil } }
            #expect(await engine.queuedBytes(of: peer.peerID) == 0, "bytes still counted after the transfer ended")
        }
    }

    @Test func aFerryPeerClaimingAForeignIDIsNotSentTo() async throws {
        try await Receive.withReceiver { engine, _ in
            let phone = await ForeignUploader(engine: engine)
            let port = Int(await engine.session.listenPort)
            let mallory = try await StrangerLink.open(port: port)
            defer { mallory.close() }
            let hello = Hello(
                peerID: phone.peer.peerID, deviceID: mallory.identity.deviceID, mode: .peer,
                capabilities: [.transfers], listenPort: 0, datagramPort: 0, sessionID: "unit", displayName: "mallory")
            try await mallory.send(SessionMessage.hello(hello).encoded() + SessionMessage.connectionRequest.encoded())
            while await engine.session.peer(phone.peer.peerID)?.state != .connected { await Task.yield() }
            // The specific refusal: any other TransferError (no peer, not connected) would hide the rule.
            await #expect(throws: TransferError.foreignRangePeerID("mallory")) {
                try await engine.send(Payload(name: "x.txt", data: Data("x".utf8)), to: [phone.peer.peerID])
            }
            // Nothing of the send reached the foreign peer that has this ID.
            await phone.peer.detach(reason: "done")
            let offers = await phone.untilDetachedMessages().filter { if case .offer = $0 { true } else { false } }
            #expect(offers.isEmpty, "\(offers)")
        }
    }
}

extension TransferEngine {
    /// Blocks the publishing queue until `gate` is signalled.
    fileprivate func holdPublishing(_ gate: DispatchSemaphore) { publishing.submit { gate.wait() } }

    /// The staged name of file `file` of transfer `key`.
    fileprivate func stagedKey(of file: Int, _ key: IncomingKey) -> String? { incoming[key]?.files[file].key }

    /// Makes a failed file's staged file be created again (empty, locked by its reservation, as `stageAhead` does)
    /// right after its removal, before its reservation is released.
    fileprivate func createStagedBetweenRemovalAndRelease() {
        probe.betweenStagedRemovalAndRelease = { reservation in
            _ = try? reservation.lockAcrossProcesses(creating: true)
        }
    }

    /// Whether transfer `key` has a publish turn under way.
    fileprivate func isPublishing(_ key: IncomingKey) -> Bool? { incoming[key]?.isPublishing }

    /// The phase of transfer `key`, nil when it is gone.
    fileprivate func phase(of key: IncomingKey) -> IncomingTransfer.Phase? { incoming[key]?.phase }

    /// Whether transfer `key` is being stopped.
    fileprivate func isEnding(_ key: IncomingKey) -> Bool? { incoming[key]?.isEnding }

    /// The bytes `peerID`'s transfers hold for their files' next chunks.
    fileprivate func heldBytes(of peerID: PeerID) -> Int {
        incoming.keys.filter { $0.peer == peerID }.reduce(0) { sum, key in
            sum + (incoming[key]?.files.reduce(0) { $0 + $1.partialChunk.count } ?? 0)
        }
    }

    /// The bytes counted for `peerID` under `IncomingTransfers.maxQueuedBytes`.
    fileprivate func queuedBytes(of peerID: PeerID) -> Int { incoming.queued(by: peerID) }
}

extension ForeignUploader {
    /// Reads answers until the peer is detached; returns every answer seen.
    func untilDetachedMessages() async -> [TransferMessage] {
        _ = await untilDetached()
        return seen
    }
}
