import FerrySystem
import FerryWire

extension TransferEngine {
    /// Accepts an offer the policy takes without asking: at once, or, when it carries digests (files this side may
    /// hold already, rule 10), in a task of its own, as an answered ask is. Hashing a held file takes as long as
    /// reading it, and the frame loop that called this is where every peer's frames wait: another peer's offer,
    /// and this sender's own cancel, which must reach `cancelIncoming` to stop the hashing (`HashStop`).
    func acceptSoon(_ key: IncomingKey, _ offer: Offer) async {
        guard !offer.fileDigests.isEmpty, offer.swarm == nil else { return await acceptOffer(key) }
        Task { await self.acceptOffer(key) }
    }

    /// The offered files (`candidates`, by index in the offer) that the receive directory holds already, byte for
    /// byte (PROTOCOL.md 11.10 rule 10).
    ///
    /// Hashed on a queue of this call's own, not the shared `accepting` one: a sender that offers large held files
    /// holds up no other peer's acceptance. At most what the sender's device has left in `AlreadyThereBudget` is
    /// hashed (taken before, what was not hashed given back after), and hashing stops between chunks once the
    /// transfer's `hashStop` is set (`cancelIncoming`: cancelled, or the link lost).
    func findHeld(
        _ candidates: [(index: Int, components: [String], size: UInt64, digest: [UInt8])], _ key: IncomingKey,
        in directory: ReceiveDirectory, chunkSize: Int
    ) async -> [Int: HeldFile] {
        guard !candidates.isEmpty, let sender = incoming[key]?.peer.deviceID else { return [:] }
        let stop = HashStop()
        incoming[key]?.hashStop = stop
        if incoming.hashBudget == nil {
            incoming.hashBudget = AlreadyThereBudget(
                limit: configuration.alreadyThereHashLimit, window: configuration.alreadyThereHashWindow)
        }
        let granted = incoming.hashBudget?.take(sender, now: clock.now) ?? 0
        guard granted > 0 else { return [:] }
        let gate = incoming.hashGate
        let (found, unused) = await BlockingIO(label: "ferry.already-there").run { () -> ([Int: HeldFile], UInt64) in
            var budget = granted
            var found: [Int: HeldFile] = [:]
            defer { gate?.finished.signal() }
            for candidate in candidates where !stop.isSet {
                gate?.pass()
                let held = directory.alreadyHolds(
                    candidate.components, size: candidate.size, digest: candidate.digest, chunkSize: chunkSize,
                    stop: stop
                ) { bytes in
                    guard bytes <= budget else { return false }
                    budget -= bytes
                    return true
                }
                if let held { found[candidate.index] = held }
            }
            return (found, budget)
        }
        incoming.hashBudget?.giveBack(unused, to: sender, now: clock.now)
        return found
    }

    /// Tests: the hashing of held files waits at `gate` before each file (nil: never).
    func holdHeldHashing(_ gate: AlreadyThereGate?) {
        incoming.hashGate = gate
    }

    /// The `fileEnd` of a file held already (PROTOCOL.md 11.10 rule 10): nothing was staged; its digest must be the
    /// one offered (the bytes held), and the copy must still be the file hashed (another program may have saved over
    /// it since the reply: then it fails, `writeFailed`, and is sent next time). Reported identical, with the digest
    /// verified (`fileFinished`).
    func heldFileEnded(
        _ file: Int, held: HeldFile, offered digest: [UInt8], expected: [UInt8], in directory: ReceiveDirectory,
        _ key: IncomingKey
    ) async {
        guard digest == expected else {
            await fileFailed(
                file, status: .hashMismatch, detail: "the digest of the file's end does not match the offer's", key,
                removeStaged: false)
            return
        }
        let name = held.name
        let now = await BlockingIO(label: "ferry.already-there").run { directory.currentStatus(ofHeld: name) }
        guard let now, now.isUnchanged(since: held.status) else {
            await fileFailed(
                file, status: .writeFailed,
                detail: "the receiver's copy of \(name) changed after it was found identical; send it again", key,
                removeStaged: false)
            return
        }
        withIncoming(key) { $0.files[file].digest = digest }
        await alreadyThereEnded(file, as: name, key)
    }
}
