import FerryStateMachines
import FerryWire

/// How a transfer engine sends and receives: where files go, which offers it takes, and the knobs of the
/// chunked protocol.
public struct TransferConfiguration: Sendable {
    /// Where received files are published; nil for an engine that only sends (offers are denied).
    public var receiveDirectory: String?
    /// How offers are answered.
    public var offerPolicy: OfferPolicy
    /// How long an offer waits for `respond(to:accept:)` under `.ask` before it is denied.
    public var askTimeout: Duration
    /// Bytes per chunk (the unit of compression, checksum, acknowledgement and resume).
    public var chunkSize: Int
    /// Chunk bytes sent and not yet acknowledged, per peer: what bounds memory on both sides.
    public var window: Int
    /// Whether chunks are compressed: by measurement (`auto`), always with one codec, or never.
    public var compression: CompressionMode
    /// Staged data of interrupted transfers older than this is removed when the engine starts.
    public var staleAfter: Duration
    /// Progress events per transfer and peer are at least this far apart (file ends are always reported).
    public var progressInterval: Duration
    /// Where the engine logs (level 1: transfers and their ends; level 2: every file). Nil logs nothing.
    public var log: (@Sendable (_ level: Int, _ message: String) -> Void)?
    /// Which received entries are handed to the application in memory (`FileOutcome.payload`) instead of (or as
    /// well as) being published in `receiveDirectory`; nil: every entry is published as a file.
    public var memoryDelivery: MemoryDelivery? = nil
    /// Broadcast relaying (PROTOCOL.md 11.11). Sending to several peers: the offer names every recipient, and those
    /// that take part pass chunks on to each other, so the sender's link carries about one copy. Receiving: this
    /// side takes part in a swarm it is offered (fetches chunks from and serves verified chunks to the other named
    /// recipients). False (`--no-relay`): a send offers no swarm; a receiver gets everything from the sender and
    /// uploads nothing.
    public var relay = true
    /// Read handles a swarm member keeps open at most, to serve chunks from (opened on demand, the least recently used
    /// closed first; at least 1).
    public var swarmReadHandles = 64
    /// Where the chunk digests of files sent are kept, so that sending an unchanged file again does not hash it
    /// (`DigestCache`); nil: every send hashes every file. `ferry send` keeps them in `~/.cache/ferry/digests`.
    public var digestCache: DigestCache? = nil
    /// At most this many bytes of files already in the receive directory are hashed for one sender (by device) per
    /// `alreadyThereHashWindow`, over all its offers, to find files held already, byte for byte, before their data
    /// moves (PROTOCOL.md 11.10 rule 10; only files whose size and name match an offered file with a digest):
    /// 16 GiB an hour (`AlreadyThereBudget`). Past it, the remaining files are sent as usual.
    public var alreadyThereHashLimit: UInt64 = 16 << 30
    /// How long a sender's spent `alreadyThereHashLimit` takes to come back whole (1 hour).
    public var alreadyThereHashWindow: Duration = .seconds(3600)

    /// An engine that receives into `receiveDirectory` (nil: sends only) under `offerPolicy`, with the protocol's
    /// knobs; `memoryDelivery` is set apart (nil here).
    public init(
        receiveDirectory: String? = nil, offerPolicy: OfferPolicy = .ask, askTimeout: Duration = .seconds(60),
        chunkSize: Int = Limits.defaultChunkSize, window: Int = 8 << 20, compression: CompressionMode = .auto,
        staleAfter: Duration = .seconds(7 * 24 * 3600), progressInterval: Duration = .milliseconds(100),
        log: (@Sendable (_ level: Int, _ message: String) -> Void)? = nil
    ) {
        self.receiveDirectory = receiveDirectory
        self.offerPolicy = offerPolicy
        self.askTimeout = askTimeout
        self.chunkSize = chunkSize
        self.window = window
        self.compression = compression
        self.staleAfter = staleAfter
        self.progressInterval = progressInterval
        self.log = log
    }
}

/// How incoming offers are answered.
public enum OfferPolicy: String, Sendable, CaseIterable {
    /// An `offerReceived` event; the application answers with `respond(to:accept:)` (denied after a timeout).
    case ask
    /// Every offer is accepted.
    case all
    /// Every offer is denied.
    case none
    /// Offers from pinned (trusted) peers are accepted, every other is denied with `nobodyToAsk`: what `ask`
    /// becomes when nobody is there to ask (no terminal), decided in the engine so that no answer is in flight.
    case trusted
}

/// Received entries an application takes in memory, like GameKit's received `NSData`, instead of files.
///
/// An entry is taken when its size is at most `maxSize` and (when `mediaTypes` is set) its offered media type is
/// one of them; every other entry is published in the receive directory as usual. A taken entry is received
/// exactly as a file is (staged in the receive directory's staging area, resumable, verified against the sender's
/// digest) and handed over only once verified: its bytes are read back from the staged file, which is then removed
/// (or, with `alsoPublish`, published as well). So the receive directory is needed either way, and memory holds at
/// most the entries of one publishing batch at a time; the application owns each `Data` once it is delivered.
public struct MemoryDelivery: Sendable, Equatable {
    /// The largest entry taken in memory, in bytes.
    public var maxSize: UInt64
    /// The media types taken (exactly, "image/png"); nil: any.
    public var mediaTypes: Set<String>?
    /// Whether a taken entry is also published as a file (then `FileOutcome.publishedName` names it).
    public var alsoPublish: Bool

    /// Entries up to `maxSize` bytes, of `mediaTypes` (nil: any), delivered in memory and, with `alsoPublish`,
    /// published too.
    public init(maxSize: UInt64, mediaTypes: Set<String>? = nil, alsoPublish: Bool = false) {
        self.maxSize = maxSize
        self.mediaTypes = mediaTypes
        self.alsoPublish = alsoPublish
    }

    /// Whether `file` is delivered in memory.
    public func takes(_ file: OfferedFile) -> Bool {
        file.size <= maxSize && (mediaTypes?.contains(file.mediaType) ?? true)
    }
}
