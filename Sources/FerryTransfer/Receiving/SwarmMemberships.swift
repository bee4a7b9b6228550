import FerrySession
import FerryStateMachines
import FerryWire

/// The swarm member's state: every swarm this side is a member of (`MemberSwarm`, by swarm ID), and the swarms that
/// ended here recently (their frames still in flight are dropped).
///
/// It is also the one place where a member's two views of a chunk change together: the fetcher's (`SwarmFetcher`:
/// held, asked for, being stored) and the transfer machine's (`IncomingTransferMachine`: stored, counted toward the
/// file), in `prefixChecked` and `storeRelayed`. Issue 27's defect 5 was those two disagreeing about one chunk, kept
/// in step by hand in two places: every relayed copy of a resumed chunk that failed its check was discarded.
///
/// A class held by the engine and touched only on its actor, for the reason `OutgoingOperation` is one. The engine
/// carries out the fetcher's actions (frames, links, staged reads and writes).
final class SwarmMemberships {
    private let swarms = RecordTable<SwarmID, MemberSwarm>()

    subscript(swarmID: SwarmID) -> MemberSwarm? {
        get { swarms[swarmID] }
        _modify { yield &swarms[swarmID] }
    }

    /// Every swarm this side is in (a copy: the table may change while the caller goes through it).
    var all: [SwarmID: MemberSwarm] { swarms.all }

    /// Runs `body` on a swarm's record in place; nil when this side is not in that swarm.
    @discardableResult
    func with<T>(_ swarmID: SwarmID, _ body: (inout MemberSwarm) throws -> T) rethrows -> T? {
        try swarms.with(swarmID, body)
    }

    /// The swarm ends here: its record goes, and its ID is remembered as ended.
    func leave(_ swarmID: SwarmID) -> MemberSwarm? {
        swarms.end(swarmID)
    }

    /// Whether swarm `swarmID` ended here recently.
    func hasEnded(_ swarmID: SwarmID) -> Bool { swarms.hasEnded(swarmID) }

    // MARK: The fetcher and the transfer machine, in step

    /// A chunk of the resumed prefix was hashed (`sha256`, the digest of the staged bytes): the fetcher's verdict
    /// and, on a mismatch, the same chunk dropped from what the transfer counts stored (its digest leaves the file's,
    /// its bytes the resumed ones), so that the copy fetched next is stored, acknowledged and hashed into the file
    /// digest in its place. Returns the fetcher's other actions, and whether the transfer dropped the chunk.
    func prefixChecked(
        _ chunk: SwarmChunk, sha256: [UInt8], _ swarmID: SwarmID, _ incoming: IncomingTransfers
    ) -> (actions: [SwarmFetcher.Action], unstored: Bool) {
        swarms.with(swarmID) { swarm -> (actions: [SwarmFetcher.Action], unstored: Bool) in
            var actions = swarm.fetcher.prefixChecked(chunk, sha256: sha256)
            var unstored = false
            actions.removeAll { action in
                guard case .unstore(let dropped) = action else { return false }
                unstored = incoming.with(swarm.key) { Self.unstore(dropped, of: swarm, from: &$0) } ?? false || unstored
                return true
            }
            return (actions, unstored)
        } ?? ([], false)
    }

    private static func unstore(_ chunk: SwarmChunk, of swarm: MemberSwarm, from transfer: inout IncomingTransfer)
        -> Bool
    {
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        guard chunk.file < transfer.files.count,
            transfer.machine?.storedChunkFailed(file: chunk.file, offset: offset) == true
        else { return false }
        transfer.files[chunk.file].chunkDigests[chunk.index] = nil
        let length = UInt64(swarm.length(of: chunk, size: transfer.files[chunk.file].size))
        transfer.resumedBytes -= min(length, transfer.resumedBytes)
        transfer.files[chunk.file].prefixDropped += length
        return true
    }

    /// A relayed chunk that matched the sender's digest (`digest`) is stored: the transfer machine counts it stored
    /// from a peer and the fetcher holds it, in one step. Returns the machine's actions (for after the write), the
    /// write-behind plan and the fetcher's actions; nil, and neither view changed, when the transfer does not take it
    /// now (ending, or the chunk not expected): the caller then tells the fetcher it was not stored.
    func storeRelayed(
        _ chunk: SwarmChunk, raw: Int, digest: [UInt8], _ swarmID: SwarmID, _ incoming: IncomingTransfers
    ) -> (written: [IncomingTransferMachine.Action], writeBehind: WriteBehind, fetcher: [SwarmFetcher.Action])? {
        guard let key = swarms[swarmID]?.key else { return nil }
        let offset = UInt64(chunk.index) * UInt64(swarms[swarmID]?.chunkSize ?? 0)
        let stored =
            incoming.with(key) { transfer -> ([IncomingTransferMachine.Action], WriteBehind)? in
                guard transfer.phase == .receiving, !transfer.isEnding,
                    (try? transfer.machine?.chunkArrived(file: chunk.file, offset: offset, rawLength: raw)) == .process,
                    let actions = transfer.machine?.chunkStored(
                        file: chunk.file, offset: offset, rawLength: raw, fromPeer: true),
                    !actions.isEmpty
                else { return nil }
                transfer.bytesDone += UInt64(raw)
                transfer.wireBytes += UInt64(raw)
                transfer.files[chunk.file].stored += UInt64(raw)
                transfer.files[chunk.file].chunkDigests[chunk.index] = digest
                transfer.currentFile = chunk.file
                let size = transfer.files[chunk.file].size
                return (actions, WriteBehind.after(writing: raw, at: offset, fileSize: size))
            } ?? nil
        guard let (written, writeBehind) = stored else { return nil }
        let fetcher =
            with(swarmID) { (swarm: inout MemberSwarm) -> [SwarmFetcher.Action] in
                swarm.relayedBytes += UInt64(raw)
                return swarm.fetcher.relayedChunkStored(chunk)
            } ?? []
        return (written, writeBehind, fetcher)
    }
}
