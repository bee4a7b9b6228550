import FerryStateMachines
import FerryWire

/// What the session hands the transfer layer above it (`FerryTransfer`), on `Session.transferEvents`.
///
/// Why a stream of its own: the application reads `events`; the transfer engine must see its frames and the
/// links it runs on going down without taking that stream from the application.
public enum TransferLinkEvent: Sendable {
    /// A frame of kind 0x0100-0x01FF arrived from a connected peer.
    case frame(Frame, from: PeerID)
    /// The peer's connected link ended: its transfers are over.
    case peerDisconnected(PeerID, reason: String)
}

extension Session {
    /// Sends one transfer frame to a connected peer that announced the `transfers` capability, as `blocks`
    /// (header and payload may be separate arrays, so one payload can be shared by several peers without a
    /// copy). Waits while the link's writer holds more than its high-water mark. Returns true when bytes were
    /// still queued for the link before this frame (the link, not the sender, is the bottleneck).
    ///
    /// `discardable` names the transfer whose data the frame carries (a chunk, a fileEnd): while it waits unsent
    /// in the writer's queue, `discardQueuedFrames(of:to:)` may drop it. `blocks` may also hold several whole frames
    /// of that transfer back to back (a file's last chunk and its `fileEnd`): they are queued, sent and dropped
    /// together.
    ///
    /// `waitForRoom: false` queues the frame and returns at once, however full the queue: for a caller that must not
    /// wait on one peer's reading while others wait on it (a swarm member's frames to other members), and that
    /// bounds what it queues itself (`transferQueueIsFull(to:)`). A peer that reads nothing is still cut off by the
    /// writer's stall deadline (`disconnectTimeout`).
    @discardableResult
    public func sendTransferFrame(
        _ blocks: [[UInt8]], to peerID: PeerID, discardable transfer: TransferID? = nil, waitForRoom: Bool = true
    ) async throws -> Bool {
        guard !isClosed else { throw SessionError.sessionClosed }
        guard let peer = peers[peerID] else { throw SessionError.unknownPeer(peerID) }
        guard let id = peer.connectedLink, var link = links[id] else {
            throw SessionError.notConnected(peer.displayName)
        }
        link.machine.noteSent(now: clock.now)
        links[id] = link
        let backlogged = link.writer.queuedBytes > 0
        link.writer.enqueue(frame: blocks, transfer: transfer)
        if waitForRoom, link.writer.queuedBytes >= link.writer.highWater { try await link.writer.waitForRoom() }
        return backlogged
    }

    /// The high-water mark of every link's writer: `sendTransferFrame` waits while a link holds this many bytes
    /// unsent, and `transferQueueIsFull(to:)` says so.
    public nonisolated static var transferQueueHighWater: Int { LinkWriter.defaultHighWater }

    /// Queues one frame a swarm member sends another member (PROTOCOL.md 11.11 rule 4) without waiting, counted apart
    /// from the link's other traffic (the same link may carry plain transfers both ways and app messages): nil, and
    /// nothing queued, when the member frames still unsent on the link would then be more than `limit` bytes, or,
    /// `belowHighWater`, when the link holds its writer's high-water mark or more unsent, whoever queued it (one frame
    /// may take it past the mark). Otherwise the bytes of member frames the link holds unsent, this one included. For a
    /// caller that bounds what it queues for a peer that reads slowly or not at all, and never waits for it.
    public func sendMemberFrame(_ blocks: [[UInt8]], to peerID: PeerID, limit: Int, belowHighWater: Bool = false)
        throws -> Int?
    {
        guard !isClosed else { throw SessionError.sessionClosed }
        guard let peer = peers[peerID] else { throw SessionError.unknownPeer(peerID) }
        guard let id = peer.connectedLink, var link = links[id] else {
            throw SessionError.notConnected(peer.displayName)
        }
        guard !belowHighWater || link.writer.queuedBytes < link.writer.highWater,
            link.writer.memberBytes + blocks.reduce(0, { $0 + $1.count }) <= limit
        else { return nil }
        link.machine.noteSent(now: clock.now)
        links[id] = link
        link.writer.enqueue(frame: blocks, transfer: nil, member: true)
        return link.writer.memberBytes
    }

    /// Tests only: the writer of the link to `peerID` sends nothing more until `resumeWriting(to:)`; returns the bytes
    /// it then holds unsent (exactly, once the write it was in has ended), nil when the peer is not connected.
    func holdWriting(to peerID: PeerID) async -> Int? {
        guard let id = peers[peerID]?.connectedLink, let writer = links[id]?.writer else { return nil }
        writer.hold()
        await writer.idle()
        return writer.queuedBytes
    }

    /// Tests only: the writer of the link to `peerID` goes on after `holdWriting(to:)`.
    func resumeWriting(to peerID: PeerID) {
        guard let id = peers[peerID]?.connectedLink, let writer = links[id]?.writer else { return }
        writer.resume()
    }

    /// Tests only: the bytes the link to `peerID` holds unsent, all of them and those of member frames; nil when the
    /// peer is not connected.
    func queuedTransferBytes(to peerID: PeerID) -> (all: Int, member: Int)? {
        guard let id = peers[peerID]?.connectedLink, let writer = links[id]?.writer else { return nil }
        return (writer.queuedBytes, writer.memberBytes)
    }

    /// Suspends until the link to `peerID` holds fewer than `transferQueueHighWater` bytes unsent, or it ended, or
    /// the task is cancelled. False when the link ended (its writer sends nothing more) or the peer is not connected.
    @discardableResult
    public func waitForTransferRoom(to peerID: PeerID) async -> Bool {
        guard let id = peers[peerID]?.connectedLink, let writer = links[id]?.writer else { return false }
        try? await writer.waitForRoom()
        return !writer.hasEnded
    }

    /// Whether the link to `peerID` holds its writer's high-water mark or more unsent (a peer reading slower than we
    /// queue, or not at all); false for a peer that is not connected.
    public func transferQueueIsFull(to peerID: PeerID) -> Bool {
        guard let id = peers[peerID]?.connectedLink, let writer = links[id]?.writer else { return false }
        return writer.queuedBytes >= writer.highWater
    }

    /// Drops the frames of `transfer` (sent with `discardable`) still waiting unsent for `peerID`'s link, so that
    /// what is queued next (the transfer's cancel, a goodbye) goes out at once instead of after megabytes of
    /// chunks. Frames already begun go out whole: the peer receives a prefix of the transfer's frames. Returns
    /// the bytes dropped.
    @discardableResult
    public func discardQueuedFrames(of transfer: TransferID, to peerID: PeerID) -> Int {
        guard let id = peers[peerID]?.connectedLink, let link = links[id] else { return 0 }
        return link.writer.discard(transfer: transfer)
    }

    /// The capabilities a connected peer announced in its hello; nil when it is not connected.
    public func capabilities(of peerID: PeerID) -> Capabilities? {
        guard let id = peers[peerID]?.connectedLink, let hello = links[id]?.machine.peerHello else { return nil }
        return hello.capabilities
    }

    /// A transfer frame arrived on a connected link: handed up, or a protocol error when nothing takes transfers
    /// (a peer must not send them before seeing the capability).
    func transferFrameReceived(_ frame: Frame, on id: LinkID) {
        guard let peerID = links[id]?.peerID else { return }
        guard configuration.transfersEnabled else {
            update(id) { machine, now in
                machine.disconnect(.protocolError, detail: "this peer does not take file transfers", now: now)
            }
            return
        }
        guard !refusedOfferOnSwarmLink(frame, on: id) else { return }
        transferBacklog.add(Frame.headerLength + frame.payload.count, from: peerID, on: id)
        transferSink.yield(.frame(frame, from: peerID))
    }
}
