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
    public var compression: CompressionMode
    /// Staged data of interrupted transfers older than this is removed when the engine starts.
    public var staleAfter: Duration
    /// Progress events per transfer and peer are at least this far apart (file ends are always reported).
    public var progressInterval: Duration
    /// Where the engine logs (level 1: transfers and their ends; level 2: every file). Nil logs nothing.
    public var log: (@Sendable (_ level: Int, _ message: String) -> Void)?

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
