import FerryWire

/// What the user asked for: let ferry decide, force one algorithm, or never compress.
public enum CompressionMode: String, Sendable, CaseIterable {
    /// Compress where it pays (see `CompressionPolicy`).
    case auto
    /// Always try zlib (raw deflate).
    case zlib
    /// Always try zstd.
    case zstd
    /// Never compress.
    case none
}

/// Decides, chunk by chunk, whether to try compressing and with which algorithm.
///
/// Apart from the compressor (as in syncthing) so the rules can be tested as plain decision lists. Compression is
/// skipped where it does not pay: in `auto` mode, for files whose first bytes are already-compressed media, after
/// chunks that did not shrink (backing off exponentially, then probing again), and on links faster than the
/// compressor (then only every 8th chunk is tried, to notice when that changes). Forced modes always try.
/// `ChunkCompressor` still sends a chunk raw whenever a try does not shrink it.
///
/// Rules, in `auto` mode, in order:
/// 1. no algorithm negotiated, or the file is already compressed: raw;
/// 2. backoff: a tried chunk that did not shrink below 90% of its raw length turns compression off for the next
///    N chunks, N = 1, 2, 4, ... 64 with each consecutive failure; a success resets N to 0;
/// 3. CPU-bound: once `linkBound` has been false for 4 chunks in a row, only every 8th chunk of that run is tried
///    (a probe); a `linkBound` chunk ends the run.
public struct CompressionPolicy: Sendable {
    /// A chunk counts as a success when it shrinks below this fraction of its raw length.
    public static let successRatio = 0.9
    /// The longest backoff, in chunks.
    public static let maximumBackoff = 64
    /// Chunks in a row without waiting for the link after which compression steps aside.
    public static let cpuBoundAfter = 4
    /// While CPU-bound, every this-many-th chunk is still tried.
    public static let probeInterval = 8

    /// What the user asked for: `auto` (where it pays), always zlib, always zstd, or `none`.
    public let mode: CompressionMode
    /// Negotiated with the peers, best first.
    public let available: [CompressionAlgorithm]

    private var fileIsCompressed = false
    /// Consecutive chunks that did not shrink, capped where the backoff stops growing.
    private var consecutiveFailures = 0
    /// Chunks still to send raw because of the backoff.
    private var backoffRemaining = 0
    /// Chunks in a row with `linkBound == false`, counted up to `cpuBoundAfter`.
    private var unboundStreak = 0
    /// Position within the CPU-bound run, modulo `probeInterval`.
    private var cpuBoundPosition = 0

    /// A policy for one transfer: `mode` as asked, `available` the algorithms both sides have, best first.
    public init(mode: CompressionMode, available: [CompressionAlgorithm]) {
        self.mode = mode
        self.available = available
    }

    /// Per file: call when a file starts, with `MediaInfo.isCompressed` of its first bytes.
    ///
    /// The backoff belongs to the previous file's content and is cleared; the CPU-bound state belongs to the link
    /// and carries over.
    public mutating func fileStarted(alreadyCompressed: Bool) {
        fileIsCompressed = alreadyCompressed
        consecutiveFailures = 0
        backoffRemaining = 0
    }

    /// Per chunk: which algorithm to try (nil = send raw). `linkBound`: the sender had to wait for the window or
    /// the socket the last time (the link, not the CPU, is the bottleneck).
    ///
    /// `index` is the chunk's index in its file; the rules count chunks themselves, so that probes stay evenly
    /// spaced across files and resumed transfers.
    public mutating func algorithm(forChunk index: Int, linkBound: Bool) -> CompressionAlgorithm? {
        let cpuBoundProbe = observe(linkBound: linkBound)
        switch mode {
        case .none:
            return nil
        case .zlib:
            return forced(.zlib)
        case .zstd:
            return forced(.zstd)
        case .auto:
            guard let best = available.first, !fileIsCompressed else { return nil }
            if backoffRemaining > 0 {
                backoffRemaining -= 1
                return nil
            }
            guard cpuBoundProbe ?? true else { return nil }
            return best
        }
    }

    /// After trying: raw length, compressed length (nil when it did not shrink).
    public mutating func record(rawLength: Int, compressedLength: Int?) {
        let succeeded = compressedLength.map { Double($0) < Self.successRatio * Double(rawLength) } ?? false
        if succeeded {
            consecutiveFailures = 0
            backoffRemaining = 0
        } else {
            // 1, 2, 4, ... 64: the cap keeps the shift (and the counter) small however long the failures last.
            consecutiveFailures = min(consecutiveFailures + 1, Self.maximumBackoff.trailingZeroBitCount + 1)
            backoffRemaining = min(1 << (consecutiveFailures - 1), Self.maximumBackoff)
        }
    }

    /// The forced algorithm if the peers have it, else the best they have.
    private func forced(_ algorithm: CompressionAlgorithm) -> CompressionAlgorithm? {
        available.contains(algorithm) ? algorithm : available.first
    }

    /// Updates the link state; returns nil when not CPU-bound, else whether this chunk is a probe.
    private mutating func observe(linkBound: Bool) -> Bool? {
        guard !linkBound else {
            unboundStreak = 0
            cpuBoundPosition = 0
            return nil
        }
        unboundStreak = min(unboundStreak + 1, Self.cpuBoundAfter)
        guard unboundStreak >= Self.cpuBoundAfter else { return nil }
        cpuBoundPosition = (cpuBoundPosition + 1) % Self.probeInterval
        return cpuBoundPosition == 0
    }
}
