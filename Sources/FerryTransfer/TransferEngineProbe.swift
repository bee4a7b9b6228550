import FerryWire

/// What tests look at and hold inside a running engine, kept apart from the roles' state (`TransferEngine.probe`):
/// counters that let a test prove a bound holds, and the gates that hold a step back.
///
/// Production code only counts into it and passes its gates, which are open unless a test closes them
/// (`TransferEngine+Probe`); no production decision reads a counter. A struct on the engine's actor: counting is an add, as it was on the engine itself.
struct TransferEngineProbe: Sendable {
    /// The most raw bytes one sender ever had queued to be written (`IncomingTransfers.maxQueuedBytes` holds).
    var largestQueuedBytes = 0
    /// Queue entries that carried chunk acknowledgements (a batch's go together).
    var ackEntries = 0
    /// Queue entries of chunk frames the pumps handed to the session (one-chunk files go together).
    var linkEntries = 0
    /// The most chunk data this side, sending, ever had unacknowledged to one peer over all its transfers
    /// (`OutgoingOperations.maxInFlightPerPeer` holds).
    var largestInFlightPerPeer = 0
    /// Compressed chunks handed to the inflater: data for an offer not accepted is never decompressed. (What one
    /// inflation allocates is measured on the inflater alone, in a process of its own: `InflateBoundTests`.)
    var inflatedChunks = 0
    /// Times a foreign peer's piece waited for room under `IncomingTransfers.maxQueuedBytes` (`ForeignPeer.write`).
    var foreignRoomWaits = 0
    /// The most bytes of member frames a link to another member ever held unsent right after this side queued one
    /// for it (the only moment they grow): `memberQueueLimit` holds.
    var largestMemberQueue = 0
    /// The most read handles a swarm's member side ever held open at once (`SwarmReaders`):
    /// `TransferConfiguration.swarmReadHandles` holds.
    var largestSwarmReaders = 0
    /// Waits for room on a link to another member that announcements began (`awaitRoom`): a queue just under the
    /// high-water mark does not make them go round and round.
    var announcementWaits = 0
    /// While set, the completion loop waits before taking write completions, which gather in the channel; and the
    /// loop's wait.
    var completionsHeld = false
    var completionsReleased: CheckedContinuation<Void, Never>?
    /// A pump about to prepare a chunk of this file waits for `openChunkGate` (a chunk slow to prepare); and the
    /// pumps waiting there.
    var chunkGateFile: Int?
    var chunkGateWaiters: [(id: TransferID, opened: CheckedContinuation<Void, Never>)] = []
    /// Runs between a failed file's staged-data removal and the release of its reservation (tests: a creation ahead
    /// landing there, `stageAhead`'s `lockAcrossProcesses(creating:)` on the accepting queue). Nil: nothing runs.
    var betweenStagedRemovalAndRelease: (@Sendable (StagedReservation) -> Void)?
    /// While set, an offer being accepted waits before its first `isStillThisOffer` check (`acceptOffer`); and the
    /// acceptances waiting there.
    var acceptGateClosed = false
    var acceptGateWaiters: [(key: IncomingKey, opened: CheckedContinuation<Void, Never>)] = []
    /// While set, a foreign peer's detach waits right after it was marked detaching, before its first cancel (or,
    /// with `detachGateBeforeMarking`, before it is marked); and the detaches waiting there.
    var detachGateClosed = false
    var detachGateBeforeMarking = false
    var detachGateWaiters: [CheckedContinuation<Void, Never>] = []
    /// Acceptances that stopped at an `isStillThisOffer` check (their reservations released, nothing answered).
    var acceptancesStopped = 0
}
