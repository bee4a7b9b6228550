import FerryWire

/// The engine's test seam (`TransferEngineProbe`): what tests switch, and the gates they close and open. Nothing
/// here is called by production code but the gates' waits, which return at once while a gate is open.
extension TransferEngine {
    /// Tests: no incoming transfer is here (answered, ended or withdrawn).
    var receivesNothing: Bool { incoming.isEmpty }

    /// Tests: no offer waits for the application's answer.
    var asksNothing: Bool { incoming.asks.isEmpty }

    /// Tests: this side's record of swarm `swarmID`, as a member (a copy).
    func memberSwarm(_ swarmID: SwarmID) -> MemberSwarm? { memberSwarms[swarmID] }

    /// Tests: how many swarms this side is a member of.
    var memberSwarmCount: Int { memberSwarms.all.count }

    /// Replaces the writeback queue (tests: one whose evictions fail), before any chunk arrives.
    func useWriteback(_ writeback: Writeback) { self.writeback = writeback }

    /// Turns direct writes of large staged files off or on (tests of write-behind), before any chunk arrives.
    func useDirectWrites(_ enabled: Bool) { directWrites = enabled }

    /// Tests: holds write completions in their channel (`completionsHeld`) until `releaseCompletions`.
    func holdCompletions() {
        probe.completionsHeld = true
    }

    /// Tests: lets the completion loop go on, with everything that gathered meanwhile.
    func releaseCompletions() {
        probe.completionsHeld = false
        probe.completionsReleased?.resume()
        probe.completionsReleased = nil
    }

    /// Tests: whether the completion loop waits for `releaseCompletions` with one completion taken.
    var completionLoopIsHeld: Bool { probe.completionsReleased != nil }

    func waitWhileCompletionsHeld() async {
        guard probe.completionsHeld else { return }
        await withCheckedContinuation { probe.completionsReleased = $0 }
    }

    /// Tests: a pump about to prepare a chunk of `file` waits there until `openChunkGate`.
    func gateChunks(ofFile file: Int) {
        probe.chunkGateFile = file
    }

    /// Tests: the transfer of the first pump waiting at the gate, if one waits.
    var chunkGateHolds: TransferID? { probe.chunkGateWaiters.first?.id }

    /// Tests: lets every pump waiting at the gate go on; no chunk waits after.
    func openChunkGate() {
        probe.chunkGateFile = nil
        for waiter in probe.chunkGateWaiters { waiter.opened.resume() }
        probe.chunkGateWaiters = []
    }

    /// Tests: offers being accepted wait before their first check until `openAcceptGate`.
    func closeAcceptGate() { probe.acceptGateClosed = true }

    /// Tests: the transfer of the first acceptance waiting at the gate, if one waits.
    var acceptGateHolds: IncomingKey? { probe.acceptGateWaiters.first?.key }

    /// Tests: lets every acceptance waiting at the gate go on; none waits after.
    func openAcceptGate() {
        probe.acceptGateClosed = false
        for waiter in probe.acceptGateWaiters { waiter.opened.resume() }
        probe.acceptGateWaiters = []
    }

    func waitAtAcceptGate(_ key: IncomingKey) async {
        guard probe.acceptGateClosed else { return }
        await withCheckedContinuation { probe.acceptGateWaiters.append((key, $0)) }
    }

    /// Tests: a foreign peer's detach waits once marked detaching, before its first cancel (`beforeMarking`: before
    /// it is marked, its peer still attached), until `openDetachGate`.
    func closeDetachGate(beforeMarking: Bool = false) {
        probe.detachGateClosed = true
        probe.detachGateBeforeMarking = beforeMarking
    }

    /// Tests: whether a detach waits at the gate.
    var detachGateHolds: Bool { !probe.detachGateWaiters.isEmpty }

    /// Tests: lets every detach waiting at the gate go on; none waits after.
    func openDetachGate() {
        probe.detachGateClosed = false
        for waiter in probe.detachGateWaiters { waiter.resume() }
        probe.detachGateWaiters = []
    }

    func waitAtDetachGate(beforeMarking: Bool) async {
        guard probe.detachGateClosed, probe.detachGateBeforeMarking == beforeMarking else { return }
        await withCheckedContinuation { probe.detachGateWaiters.append($0) }
    }

    func waitAtChunkGate(file: Int, _ id: TransferID) async {
        guard file == probe.chunkGateFile else { return }
        await withCheckedContinuation { probe.chunkGateWaiters.append((id, $0)) }
    }
}
