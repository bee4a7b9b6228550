import FerryTransfer

/// The last word of `ferry send`: what was sent, how fast, how well it compressed, and how each peer fared.
///
/// A plain value built from the engine's outcomes (and the peers that could not even be connected), so its text
/// and JSON forms are pinned by tests without running a transfer.
public struct TransferSummary: Sendable, Equatable {
    /// How the transfer with one peer ended.
    public struct PeerResult: Sendable, Equatable {
        public var name: String
        /// Nil for a peer that was never connected (an address that did not answer).
        public var peerID: String?
        public var filesSucceeded: Int
        public var filesFailed: Int
        public var filesSkipped: Int
        public var bytes: UInt64
        public var wireBytes: UInt64
        /// Nil when every file arrived.
        public var failure: String?
        /// Of `filesSucceeded`, files the peer already held byte for byte under their name.
        public var filesAlreadyThere: Int

        public init(
            name: String, peerID: String?, filesSucceeded: Int = 0, filesFailed: Int = 0, filesSkipped: Int = 0,
            bytes: UInt64 = 0, wireBytes: UInt64 = 0, failure: String? = nil, filesAlreadyThere: Int = 0
        ) {
            self.name = name
            self.peerID = peerID
            self.filesSucceeded = filesSucceeded
            self.filesFailed = filesFailed
            self.filesSkipped = filesSkipped
            self.bytes = bytes
            self.wireBytes = wireBytes
            self.failure = failure
            self.filesAlreadyThere = filesAlreadyThere
        }

        /// The result of an engine outcome.
        public init(_ outcome: TransferOutcome) {
            self.init(
                name: outcome.peer.displayName, peerID: outcome.peer.peerID.description,
                filesSucceeded: outcome.filesSucceeded, filesFailed: outcome.filesFailed,
                filesSkipped: outcome.filesSkipped, bytes: outcome.bytes, wireBytes: outcome.wireBytes,
                failure: outcome.isSuccess ? nil : outcome.failure ?? Self.countsText(outcome),
                filesAlreadyThere: outcome.filesAlreadyThere)
        }

        static func countsText(_ outcome: TransferOutcome) -> String {
            "\(outcome.filesFailed) failed, \(outcome.filesSkipped) skipped"
        }

        public var isSuccess: Bool {
            failure == nil
        }
    }

    /// Files offered and their total size.
    public var files: Int
    public var bytes: UInt64
    /// From the offer to the last peer's end.
    public var seconds: Double
    public var peers: [PeerResult]

    public init(files: Int, bytes: UInt64, seconds: Double, peers: [PeerResult]) {
        self.files = files
        self.bytes = bytes
        self.seconds = seconds
        self.peers = peers
    }

    /// Every file reached every peer (and there was at least one peer).
    public var isSuccess: Bool {
        !peers.isEmpty && peers.allSatisfy(\.isSuccess)
    }

    /// File bytes moved to all peers together.
    public var sentBytes: UInt64 {
        peers.reduce(0) { $0 &+ $1.bytes }
    }

    public var wireBytes: UInt64 {
        peers.reduce(0) { $0 &+ $1.wireBytes }
    }

    /// File bytes per second, all peers together.
    public var throughput: Double {
        seconds > 0 ? Double(sentBytes) / seconds : 0
    }

    /// File bytes over bytes on the wire; 1 when nothing was sent.
    public var compressionRatio: Double {
        wireBytes == 0 ? 1 : Double(sentBytes) / Double(wireBytes)
    }

    /// The text form, for stderr: a headline and one line per peer (names escaped).
    ///
    /// ```
    /// sent 2 files (1.5 MiB) to 1 of 2 peers in 0.8 s (1.9 MiB/s, compression 1.02x)
    ///   alice: ok
    ///   bob: failed: the offer was denied (deniedByUser)
    /// ```
    public var text: String {
        let ok = peers.filter(\.isSuccess).count
        let files = self.files == 1 ? "1 file" : "\(self.files) files"
        let peerCount = peers.count == 1 ? "1 peer" : "\(peers.count) peers"
        let to = ok == peers.count ? peerCount : "\(ok) of \(peerCount)"
        var text = "sent \(files) (\(TransferFormat.bytes(bytes))) to \(to) in \(TransferFormat.duration(seconds))"
        text += " (\(TransferFormat.rate(throughput)), compression \(TransferFormat.ratio(compressionRatio)))\n"
        for peer in peers {
            var state = peer.failure.map { "failed: " + TerminalText.escape($0) } ?? "ok"
            if peer.filesAlreadyThere > 0 {
                let count = peer.filesAlreadyThere == 1 ? "1 file" : "\(peer.filesAlreadyThere) files"
                state += " (\(count) already there (identical))"
            }
            text += "  \(TerminalText.escape(peer.name)): \(state)\n"
        }
        return text
    }

    /// The JSON form: `{"event":"summary","ok":...,"files":...,"peers":[...]}`.
    public var jsonLine: JSONLine {
        var line: JSONLine = ["event": "summary", "ok": .bool(isSuccess), "files": .int(files)]
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
                    return .object(fields)
                }))
        return line
    }
}
