import FerrySession
import FerryTransfer
import FerryWire
import Synchronization

extension TransferReporter {
    /// The JSON line of an engine event. Names are the `event` values scripts match on: `offer`, `started`,
    /// `denied`, `progress`, `file`, `finished`. Byte counts are integers, times are seconds, rates are bytes
    /// per second; unknown values are `null`.
    static func jsonLine(for event: TransferEvent) -> JSONLine {
        switch event {
        case .offerReceived(let offer):
            var line = header(.offer, offer.transferID, offer.peer, direction: .receiving)
            line.append("files", files(offer.files, accepted: nil, resumeOffsets: nil))
            line.append("bytes", int(offer.totalBytes))
            line.append("code", offer.peer.pairingCode.map { .string($0) } ?? .null)
            line.append("trusted", .bool(offer.peer.isTrusted))
            let left = TransferFormat.seconds(offer.deadline - .now)
            line.append("answerWithin", .double(max(0, left)))
            return line
        case .started(let transferID, let peer, let direction, let offered, let accepted, let resumeOffsets):
            var line = header(.started, transferID, peer, direction: direction)
            line.append("files", files(offered, accepted: accepted, resumeOffsets: resumeOffsets))
            let total = zip(offered, accepted).reduce(UInt64(0)) { $0 + ($1.1 ? $1.0.size : 0) }
            line.append("bytes", int(total))
            return line
        case .denied(let transferID, let peer, let direction, let reason):
            var line = header(.denied, transferID, peer, direction: direction)
            line.append("reason", .string(reason))
            return line
        case .progress(let progress):
            var line = header(.progress, progress.transferID, progress.peer, direction: progress.direction)
            line.append("fileIndex", .int(progress.fileIndex))
            line.append("file", .string(progress.fileName))
            line.append("fileBytes", int(progress.fileBytesDone))
            line.append("fileSize", int(progress.fileSize))
            line.append("bytes", int(progress.bytesDone))
            line.append("totalBytes", int(progress.totalBytes))
            line.append("filesDone", .int(progress.filesDone))
            line.append("fileCount", .int(progress.fileCount))
            line.append("rate", .double(progress.rate))
            line.append("secondsLeft", progress.secondsLeft.map { .double($0) } ?? .null)
            return line
        case .fileFinished(let outcome):
            var line = header(.file, outcome.transferID, outcome.peer, direction: outcome.direction)
            line.append("fileIndex", .int(outcome.fileIndex))
            line.append("name", .string(outcome.fileName))
            line.append("size", int(outcome.size))
            line.append("ok", .bool(outcome.failure == nil))
            line.append("publishedName", outcome.publishedName.map { .string($0) } ?? .null)
            line.append("failure", outcome.failure.map { .string($0) } ?? .null)
            line.append("resumedBytes", int(outcome.resumedBytes))
            line.append("alreadyThere", .bool(outcome.alreadyThere))
            line.append("digest", outcome.digest.map { .string(HashCommand.hex($0)) } ?? .null)
            // The entry of a text sent with --text (its name is ferry's `message.txt`, not the person's).
            line.append("message", .bool(Payload.isMessage(outcome.mediaType, size: outcome.size)))
            // Only when it did: a file event of any other file keeps its shape.
            if outcome.replaced { line.append("replaced", .bool(true)) }
            // Only for a file from a peer of another protocol: how it was checked ("sha256" or "size").
            if outcome.verification != .fileDigest {
                line.append("verification", .string(outcome.verification.rawValue))
            }
            return line
        case .finished(let outcome):
            var line = header(.finished, outcome.transferID, outcome.peer, direction: outcome.direction)
            line.append("ok", .bool(outcome.isSuccess))
            line.append("filesSucceeded", .int(outcome.filesSucceeded))
            line.append("filesFailed", .int(outcome.filesFailed))
            line.append("filesSkipped", .int(outcome.filesSkipped))
            line.append("bytes", int(outcome.bytes))
            line.append("wireBytes", int(outcome.wireBytes))
            line.append("resumedBytes", int(outcome.resumedBytes))
            line.append("seconds", .double(TransferFormat.seconds(outcome.duration)))
            line.append("compressionRatio", .double(outcome.compressionRatio))
            line.append("failure", outcome.failure.map { .string($0) } ?? .null)
            line.append("relayedBytes", int(outcome.relayedBytes))
            line.append("servedBytes", int(outcome.servedBytes))
            line.append("keptBytes", int(outcome.keptBytes))
            line.append("emptyFolders", .int(outcome.emptyFolders))
            line.append("emptyFoldersFailed", .int(outcome.emptyFoldersFailed))
            return line
        case .relayerCutOff(let report):
            var line = JSONLine(
                event: JSONEvents.Transfers.relayerCutOff, ["direction": .string(report.direction.rawValue)])
            line.append("transferID", .string(report.transferID.description))
            line.append("offender", .string(report.offender))
            line.append("reporter", report.reporter.map { .string($0) } ?? .null)
            line.append("reason", .string(report.reason))
            line.append("fileIndex", .int(report.fileIndex))
            line.append("chunkIndex", .int(report.chunkIndex))
            return line
        case .swarmEnded(let totals):
            var line = header(.swarmEnded, totals.transferID, totals.sender, direction: .receiving)
            line.append("relayedBytes", int(totals.relayedBytes))
            line.append("servedBytes", int(totals.servedBytes))
            return line
        }
    }

    /// `{"event":..., "direction":..., "transferID":..., "peer":..., "peerID":..., "deviceID":...}`.
    static func header(
        _ event: JSONEvents.Transfers, _ transferID: TransferID, _ peer: PeerInfo, direction: TransferDirection
    ) -> JSONLine {
        var line = JSONLine(event: event, ["direction": .string(direction.rawValue)])
        line.append("transferID", .string(transferID.description))
        appendPeer(peer, to: &line)
        // Only for a peer of another protocol (a LocalSend app): the lines of a ferry peer keep their shape.
        if peer.protocolName != "ferry" { line.append("protocol", .string(peer.protocolName)) }
        return line
    }

    /// Adds `peer`, `peerID` and `deviceID`.
    static func appendPeer(_ peer: PeerInfo, to line: inout JSONLine) {
        line.append("peer", .string(peer.displayName))
        line.append("peerID", .string(peer.peerID.description))
        line.append("deviceID", .string(deviceIDText(peer.deviceID)))
    }

    /// The last device ID written and its text: every line of a transfer names the same peer, and its base32 form
    /// in groups, built again for each of 1000 small files' lines, was about 1% of either end's user time.
    private static let lastDeviceID = Mutex<(id: DeviceID, text: String)?>(nil)

    /// `id.description`, from `lastDeviceID` when it is the same device.
    static func deviceIDText(_ id: DeviceID) -> String {
        if let last = lastDeviceID.withLock({ $0 }), last.id == id { return last.text }
        let text = id.description
        lastDeviceID.withLock { $0 = (id, text) }
        return text
    }

    /// The offered files, with the receiver's decisions when known.
    static func files(_ files: [OfferedFile], accepted: [Bool]?, resumeOffsets: [UInt64]?) -> JSONValue {
        .array(
            files.enumerated().map { index, file in
                var pairs: [(key: String, value: JSONValue)] = [
                    ("name", .string(file.path)), ("size", int(file.size)), ("mediaType", .string(file.mediaType)),
                    ("pixelWidth", .int(Int(file.pixelWidth))), ("pixelHeight", .int(Int(file.pixelHeight))),
                ]
                if let accepted, index < accepted.count {
                    pairs.append(("accepted", .bool(accepted[index])))
                }
                if let resumeOffsets, index < resumeOffsets.count {
                    pairs.append(("resumeOffset", int(resumeOffsets[index])))
                }
                return .object(pairs)
            })
    }

    /// A byte count as a JSON integer (clamped: JSON readers hold 63 bits at most).
    static func int(_ value: UInt64) -> JSONValue {
        .int(Int(clamping: value))
    }
}
