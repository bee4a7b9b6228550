import FerryTransfer

/// The last word of `ferry send`: what was sent, how fast, how well it compressed, and how each peer fared.
///
/// A plain value built from the engine's outcomes (and the peers that could not even be connected), so its text
/// and JSON forms are pinned by tests without running a transfer.
public struct TransferSummary: Sendable, Equatable {
    /// How the transfer with one peer ended.
    public struct PeerResult: Sendable, Equatable {
        /// The peer's display name, as received (escaped when rendered).
        public var name: String
        /// Nil for a peer that was never connected (an address that did not answer).
        public var peerID: String?
        /// Files published at the peer (or already there, identical).
        public var filesSucceeded: Int
        /// Files that failed (or never ended).
        public var filesFailed: Int
        /// Files the peer chose not to take.
        public var filesSkipped: Int
        /// File bytes the peer acknowledged (stored), in this run.
        public var bytes: UInt64
        /// Chunk bytes on the wire (after compression), re-sent chunks included.
        public var wireBytes: UInt64
        /// The raw bytes of those chunks (before compression); nil when unknown (then `bytes` stands in).
        public var chunkBytes: UInt64?
        /// Nil when every file arrived.
        public var failure: String?
        /// Of `filesSucceeded`, files the peer already held byte for byte under their name.
        public var filesAlreadyThere: Int
        /// The peer denied the offer, for this reason (`failure` says so too).
        public var deniedReason: String?
        /// Of `bytes`, raw bytes the peer stored from other receivers of the broadcast rather than from here (0 outside
        /// a swarm); `chunkBytes` counts only what this side sent it.
        public var relayedBytes: UInt64
        /// The sizes of the files the peer accepted, added up.
        public var acceptedBytes: UInt64
        /// Bytes not sent again: resumed prefixes and files held already (`TransferOutcome.resumedBytes`).
        public var resumedBytes: UInt64
        /// Of `resumedBytes`, the sizes of the files the peer held already.
        public var alreadyThereBytes: UInt64
        /// For a transfer that stopped early: what the peer verified of the files that did not end, kept staged there.
        public var keptBytes: UInt64
        /// How the transfer stopped early, when it did.
        public var stop: TransferStop?
        /// "localsend" for a LocalSend receiver (`protocol` in JSON); nil for a ferry peer.
        public var protocolName: String?

        /// A result from its parts; every count defaults to zero and every text to nil (success).
        public init(
            name: String, peerID: String?, filesSucceeded: Int = 0, filesFailed: Int = 0, filesSkipped: Int = 0,
            bytes: UInt64 = 0, wireBytes: UInt64 = 0, chunkBytes: UInt64? = nil, failure: String? = nil,
            deniedReason: String? = nil, filesAlreadyThere: Int = 0, relayedBytes: UInt64 = 0,
            acceptedBytes: UInt64 = 0, resumedBytes: UInt64 = 0, alreadyThereBytes: UInt64 = 0, keptBytes: UInt64 = 0,
            stop: TransferStop? = nil
        ) {
            self.relayedBytes = relayedBytes
            self.acceptedBytes = acceptedBytes
            self.resumedBytes = resumedBytes
            self.alreadyThereBytes = alreadyThereBytes
            self.keptBytes = keptBytes
            self.stop = stop
            self.name = name
            self.peerID = peerID
            self.filesSucceeded = filesSucceeded
            self.filesFailed = filesFailed
            self.filesSkipped = filesSkipped
            self.bytes = bytes
            self.wireBytes = wireBytes
            self.chunkBytes = chunkBytes
            self.failure = failure
            self.deniedReason = deniedReason
            self.filesAlreadyThere = filesAlreadyThere
        }

        /// The result of an engine outcome.
        public init(_ outcome: TransferOutcome) {
            self.init(
                name: outcome.peer.displayName, peerID: outcome.peer.peerID.description,
                filesSucceeded: outcome.filesSucceeded, filesFailed: outcome.filesFailed,
                filesSkipped: outcome.filesSkipped, bytes: outcome.bytes, wireBytes: outcome.wireBytes,
                chunkBytes: outcome.chunkBytes,
                failure: outcome.isSuccess ? nil : outcome.failure ?? Self.countsText(outcome),
                deniedReason: outcome.deniedReason, filesAlreadyThere: outcome.filesAlreadyThere,
                relayedBytes: outcome.relayedBytes, acceptedBytes: outcome.acceptedBytes,
                resumedBytes: outcome.resumedBytes, alreadyThereBytes: outcome.alreadyThereBytes,
                keptBytes: outcome.keptBytes, stop: outcome.stop)
        }

        /// For a transfer the receiver stopped (or whose link was lost) after it verified some of the files that did
        /// not end: what happened, how far it got and that the receiver keeps it (`InterruptionText.sending`); nil
        /// otherwise.
        var stoppedText: String? {
            guard let failure, deniedReason == nil else { return nil }
            return InterruptionText.sending(
                stop, failure: failure, done: bytes &+ resumedBytes, total: acceptedBytes, kept: keptBytes)
        }

        static func countsText(_ outcome: TransferOutcome) -> String {
            "\(outcome.filesFailed) failed, \(outcome.filesSkipped) skipped"
        }

        /// Whether every file arrived: no failure and no denial.
        public var isSuccess: Bool {
            failure == nil
        }

        /// How it ended, after the peer's name: "ok", "denied the offer (...)", "failed: ...", or "failed after 2
        /// of 3 files: ..." (escaped).
        var state: String {
            if let deniedReason { return "denied the offer (\(TerminalText.escape(deniedReason)))" }
            guard let failure else {
                guard filesAlreadyThere > 0 else { return "ok" }
                let count = filesAlreadyThere == 1 ? "1 file" : "\(filesAlreadyThere) files"
                return "ok (\(count) already there, identical)"
            }
            let files = filesSucceeded + filesFailed + filesSkipped
            let after = filesSucceeded > 0 ? " after \(filesSucceeded) of \(files) files" : ""
            if let stoppedText { return "stopped\(after): " + stoppedText }
            return "failed\(after): " + TerminalText.escape(failure)
        }
    }

    /// Entries offered: the files, and the text of `--text` when there was one (see `messages`).
    public var files: Int
    /// Of `files`, texts sent with `--text` (0 or 1): the text form counts them apart, as a message.
    public var messages: Int
    /// The total size of the offered files, in bytes.
    public var bytes: UInt64
    /// Empty folders offered besides the files (the offer's folders section: the empty folders of folders sent).
    public var emptyFolders = 0
    /// The longest time a peer's transfer ran, from its acceptance to its end, failed ones included (see
    /// `transferTime`).
    public var seconds: Double
    /// Each peer's result, in the order they are listed.
    public var peers: [PeerResult]

    /// Below this ratio compression did not pay (or nothing was compressed): the text form does not mention it.
    static let worthMentioningRatio = 1.05

    /// A summary from its parts; `seconds` is usually `transferTime(_:)` of the outcomes; `messages` of the `files`
    /// are texts.
    public init(files: Int, messages: Int = 0, bytes: UInt64, seconds: Double, peers: [PeerResult]) {
        self.files = files
        self.messages = messages
        self.bytes = bytes
        self.seconds = seconds
        self.peers = peers
    }

    /// The time `seconds` describes: until the last peer ended, failed ones included (a link that died after 40 s
    /// took 40 s of the run). Each peer's time runs from its acceptance, as the time a person took to say yes is
    /// not transfer time; a denial moved nothing and does not count. Nil when every peer denied.
    public static func transferTime(_ outcomes: [TransferOutcome]) -> Duration? {
        outcomes.filter { $0.deniedReason == nil }.map(\.duration).max()
    }

    /// Every file reached every peer (and there was at least one peer).
    public var isSuccess: Bool {
        !peers.isEmpty && peers.allSatisfy(\.isSuccess)
    }

    /// File bytes the peers acknowledged, all peers together: what was actually delivered.
    public var sentBytes: UInt64 {
        peers.reduce(0) { $0 &+ $1.bytes }
    }

    /// Chunk bytes on the wire (after compression), all peers together, re-sent chunks included.
    public var wireBytes: UInt64 {
        peers.reduce(0) { $0 &+ $1.wireBytes }
    }

    /// Raw bytes of the chunks that went on the wire (re-sent ones included), all peers together.
    public var chunkBytes: UInt64 {
        peers.reduce(0) { $0 &+ ($1.chunkBytes ?? $1.bytes) }
    }

    /// Bytes the peers had from an interrupted transfer and were not sent again, all peers together (files they held
    /// already are said apart, as "already there").
    public var resumedBytes: UInt64 {
        peers.reduce(0) { $0 &+ ($1.resumedBytes - min($1.alreadyThereBytes, $1.resumedBytes)) }
    }

    /// Raw bytes the receivers of a broadcast stored from each other rather than from here, all peers together.
    public var relayedBytes: UInt64 {
        peers.reduce(0) { $0 &+ $1.relayedBytes }
    }

    /// Delivered file bytes per second, all peers together.
    public var throughput: Double {
        seconds > 0 ? Double(sentBytes) / seconds : 0
    }

    /// Raw chunk bytes over the bytes they took on the wire; 1 when nothing was sent.
    public var compressionRatio: Double {
        wireBytes == 0 ? 1 : Double(chunkBytes) / Double(wireBytes)
    }

    /// The text form, for stderr: a headline and one line per peer (names escaped).
    ///
    /// ```
    /// sent 2 files (1.5 MiB) to 1 of 2 peers in 0.8 s (1.9 MiB/s, compression 2.10x)
    ///   alice: ok
    ///   bob: denied the offer (denied by the user)
    /// ```
    /// The compression ratio is shown only where compression paid (`worthMentioningRatio`). After a broadcast in
    /// which receivers relayed chunks to each other, a second line says how much went out from here and how much
    /// they relayed (`broadcastLine`). When no file reached
    /// any peer, the headline says so, with the reason when there was one peer:
    /// `nothing sent: bob denied the offer (denied by the user)`.
    public var text: String {
        let ok = peers.filter(\.isSuccess).count
        let files = Self.entries(files: self.files - messages, messages: messages, emptyFolders: emptyFolders)
        let peerCount = peers.count == 1 ? "1 peer" : "\(peers.count) peers"
        let lines = peers.map { "  \(TerminalText.escape($0.name)): \($0.state)\n" }.joined()
        if ok == 0, peers.allSatisfy({ $0.filesSucceeded == 0 }) {
            guard let only = peers.first, peers.count == 1 else {
                if peers.isEmpty { return "nothing sent: no peer was reached\n" }
                // Bytes that reached a peer and are kept for a resume were not "nothing".
                let some = peers.contains { $0.stoppedText != nil }
                return (some ? "no file arrived whole at \(peerCount):\n" : "nothing sent to \(peerCount):\n") + lines
            }
            let name = TerminalText.escape(only.name)
            if only.deniedReason != nil { return "nothing sent: \(name) \(only.state)\n" }
            if let stopped = only.stoppedText { return "stopped at \(name): \(stopped)\n" }
            let failure = TerminalText.escape(only.failure ?? "no file arrived")
            // A connection that failed names the peer already ("could not reach bob: ..."): not prefixed again.
            if failure.hasPrefix("could not reach \(name): ") { return "nothing sent: \(failure)\n" }
            return "nothing sent to \(name): \(failure)\n"
        }
        let to = ok == peers.count ? peerCount : "\(ok) of \(peerCount)"
        var text = "sent \(files) (\(TransferFormat.bytes(bytes))) to \(to) in \(TransferFormat.duration(seconds))"
        // No rate from a time shown as "under 0.1 s": 20 KiB in 0.1 ms is no 200 MiB/s anyone could expect again.
        var details = TransferFormat.isMeasurable(seconds) ? [TransferFormat.rate(throughput)] : []
        if compressionRatio >= Self.worthMentioningRatio {
            details.append("compression \(TransferFormat.ratio(compressionRatio))")
        }
        if resumedBytes > 0 { details.append("\(TransferFormat.bytes(resumedBytes)) resumed, not sent again") }
        if !details.isEmpty { text += " (" + details.joined(separator: ", ") + ")" }
        return text + "\n" + (broadcastLine.map { $0 + "\n" } ?? "") + lines
    }

    /// `broadcast: 70 MiB sent from here (1.1x the files' size), 954 MiB relayed by the receivers`: what this side's
    /// link carried (raw chunk bytes, and that as a multiple of the size of what was sent: 1.0x is one copy, what a
    /// single receiver costs) and what the receivers passed on to each other; nil when they relayed nothing (a single
    /// receiver, `--no-relay`, receivers that did not take part).
    var broadcastLine: String? {
        guard relayedBytes > 0 else { return nil }
        let whose = files == 1 ? "the file's" : "the files'"
        let times = bytes > 0 ? " (\(TransferFormat.copies(Double(chunkBytes) / Double(bytes))) \(whose) size)" : ""
        return "broadcast: \(TransferFormat.bytes(chunkBytes)) sent from here\(times), "
            + "\(TransferFormat.bytes(relayedBytes)) relayed by the receivers"
    }

    /// The JSON form: `{"event":"summary","ok":...,"files":...,"peers":[...]}`.
    public var jsonLine: JSONLine {
        var line = JSONLine(event: JSONEvents.Transfers.summary, ["ok": .bool(isSuccess), "files": .int(files)])
        line.append("bytes", TransferReporter.int(bytes))
        line.append("sentBytes", TransferReporter.int(sentBytes))
        line.append("wireBytes", TransferReporter.int(wireBytes))
        line.append("seconds", .double(seconds))
        line.append("throughput", .double(throughput))
        line.append("compressionRatio", .double(compressionRatio))
        line.append(
            "peers",
            .array(
                peers.map { peer in
                    var fields: [(key: String, value: JSONValue)] = [
                        ("peer", .string(peer.name)), ("peerID", peer.peerID.map { .string($0) } ?? .null),
                        ("ok", .bool(peer.isSuccess)), ("filesSucceeded", .int(peer.filesSucceeded)),
                        ("filesFailed", .int(peer.filesFailed)), ("filesSkipped", .int(peer.filesSkipped)),
                        ("bytes", TransferReporter.int(peer.bytes)),
                        ("wireBytes", TransferReporter.int(peer.wireBytes)),
                        ("failure", peer.failure.map { .string($0) } ?? .null),
                    ]
                    // Only when there were some: "already there (identical)", counted among filesSucceeded.
                    if peer.filesAlreadyThere > 0 { fields.append(("filesAlreadyThere", .int(peer.filesAlreadyThere))) }
                    // Only after a broadcast the peer took part in: what it got from the other receivers.
                    if peer.relayedBytes > 0 {
                        fields.append(("relayedBytes", TransferReporter.int(peer.relayedBytes)))
                    }
                    // Only when some were: as `finished`'s resumedBytes and keptBytes.
                    if peer.resumedBytes > 0 {
                        fields.append(("resumedBytes", TransferReporter.int(peer.resumedBytes)))
                    }
                    if peer.keptBytes > 0 { fields.append(("keptBytes", TransferReporter.int(peer.keptBytes))) }
                    // Only for a LocalSend receiver: which protocol it spoke.
                    if let name = peer.protocolName { fields.append(("protocol", .string(name))) }
                    return .object(fields)
                }))
        line.append("chunkBytes", TransferReporter.int(chunkBytes))
        line.append("relayedBytes", TransferReporter.int(relayedBytes))
        line.append("messages", .int(messages))
        // Only when there were some: the summary of a send without empty folders keeps its shape.
        if emptyFolders > 0 { line.append("emptyFolders", .int(emptyFolders)) }
        return line
    }

    /// What was sent, as a person counts it: `1 file`, `3 files`, `a message`, `2 files and a message` (a text of
    /// `--text` is no file to the one who typed it), `3 files and 2 empty folders`, `1 file, 1 empty folder and a
    /// message`.
    static func entries(files: Int, messages: Int, emptyFolders: Int = 0) -> String {
        var parts: [String] = []
        if files > 0 || messages == 0 { parts.append(files == 1 ? "1 file" : "\(files) files") }
        if emptyFolders > 0 { parts.append(emptyFolders == 1 ? "1 empty folder" : "\(emptyFolders) empty folders") }
        if messages > 0 { parts.append(messages == 1 ? "a message" : "\(messages) messages") }
        guard let last = parts.popLast() else { return "" }
        return parts.isEmpty ? last : parts.joined(separator: ", ") + " and " + last
    }
}
