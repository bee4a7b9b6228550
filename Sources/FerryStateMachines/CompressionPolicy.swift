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

/// Decides, chunk by chunk, whether to try compressing, with which algorithm and how hard.
///
/// Apart from the compressor (as in syncthing) so the rules can be tested as plain decision lists. Compression is
/// skipped where it does not pay: in `auto` mode, for files whose first bytes are already-compressed media, after
/// chunks that did not shrink (backing off exponentially, then probing again), and where the CPU rather than the
/// link is the bottleneck; where the link is, spare CPU buys a higher zstd level (`CompressionLevelController`).
/// Forced modes always try, at level 1. `ChunkCompressor` still sends a chunk raw whenever a try does not shrink it.
///
/// Rules, in `auto` mode, in order:
/// 1. no algorithm negotiated, or the file is already compressed: raw;
/// 2. backoff: a tried chunk that did not shrink below 90% of its raw length turns compression off for the next
///    N chunks, N = 1, 2, 4, ... 64 with each consecutive failure; a success resets N to 0;
/// 3. pace: the level controller's step, from the paces of the chunks it decided (raw is its lowest step).
///    Chunks sent raw by rules 1 and 2 say nothing about the levels and are not counted.
public struct CompressionPolicy: Sendable {
    /// What to do with one chunk: compress it with `algorithm` at `level`.
    public struct Choice: Sendable, Equatable {
        /// The codec to compress with (zlib or zstd).
        public var algorithm: CompressionAlgorithm
        /// Its compression level (zstd 1-8 from the level controller; 1 for a forced `--compress zlib|zstd`).
        public var level: Int

        /// Compress with `algorithm` at `level`.
        public init(_ algorithm: CompressionAlgorithm, level: Int) {
            self.algorithm = algorithm
            self.level = level
        }
    }

    /// What the sender measured of one chunk, as the level controller reads it.
    public typealias Pace = CompressionLevelController.Pace

    /// A chunk counts as a success when it shrinks below this fraction of its raw length.
    public static let successRatio = 0.9
    /// The longest backoff, in chunks.
    public static let maximumBackoff = 64

    /// What the user asked for: `auto` (where it pays), always zlib, always zstd, or `none`.
    public let mode: CompressionMode
    /// Negotiated with the peers, best first.
    public let available: [CompressionAlgorithm]

    private var fileIsCompressed = false
    /// Consecutive chunks that did not shrink, capped where the backoff stops growing.
    private var consecutiveFailures = 0
    /// Chunks still to send raw because of the backoff.
    private var backoffRemaining = 0
    /// The level, in `auto` mode; its state belongs to the link and carries over from file to file.
    public private(set) var controller: CompressionLevelController
    /// The last chunk decided was the controller's (not raw by rule 1 or 2): its pace counts.
    private var lastWasPaced = false

    /// `ladder`: the controller's steps (by default zstd's when zstd is the best available, else raw and level 1);
    /// `warmUpChunks`: paces it ignores at the start; `startLevel`: the controller's first level, the highest step
    /// at or below it, at least the first compressing one (the sender passes
    /// `CompressionLevelController.linkStartLevel` for a link that is not loopback).
    public init(
        mode: CompressionMode, available: [CompressionAlgorithm], ladder: [CompressionLevelController.Step]? = nil,
        warmUpChunks: Int = CompressionLevelController.warmUpChunks, startLevel: Int = 1
    ) {
        self.mode = mode
        self.available = available
        let steps =
            ladder
            ?? (available.first == .zstd
                ? CompressionLevelController.zstdLadder
                : [.init(level: 0, cost: 0, size: 4), .init(level: 1, cost: 1, size: 1)])
        let start = steps.lastIndex { $0.level > 0 && $0.level <= startLevel } ?? 1
        self.controller = CompressionLevelController(ladder: steps, startStep: start, warmUpChunks: warmUpChunks)
    }

    /// Per file: call when a file starts, with `MediaInfo.isCompressed` of its first bytes, and whether the whole
    /// file is one chunk at most (`singleChunk`).
    ///
    /// The backoff belongs to the previous file's content and is cleared, except by a file of one chunk at most,
    /// which continues it: many small files of content that does not compress (random bytes, ciphertext without a
    /// known magic number) then cost a zstd attempt every 1, 2, 4, ... 64 files instead of one per file (1000 random
    /// files of 4-64 KiB: 13-25% of the sender's CPU went into attempts that failed). A small file that compresses
    /// ends the backoff as any chunk does, and a larger file clears it. The level belongs to the link and carries
    /// over.
    public mutating func fileStarted(alreadyCompressed: Bool, singleChunk: Bool = false) {
        fileIsCompressed = alreadyCompressed
        guard !singleChunk else { return }
        consecutiveFailures = 0
        backoffRemaining = 0
    }

    /// Per chunk: what to try (nil = send raw). `pace`: what the sender measured of the chunk it sent before
    /// (nil when it has nothing to say, as for the first).
    public mutating func choice(after pace: Pace?) -> Choice? {
        if let pace, lastWasPaced { controller.record(pace) }
        lastWasPaced = false
        guard case .auto = mode else { return upcoming }
        guard !available.isEmpty, !fileIsCompressed else { return nil }
        if backoffRemaining > 0 {
            backoffRemaining -= 1
            return nil
        }
        lastWasPaced = true
        return upcoming
    }

    /// What `choice(after:)` picks for the next chunk unless a pace moves the level first, without taking it: the
    /// chunk source prepares the next chunk of a file with it while the chunk before is on the wire, and compresses it
    /// again only when the choice made when it is asked for differs (a move of the level, at most once an epoch).
    public var upcoming: Choice? {
        switch mode {
        case .none:
            return nil
        case .zlib:
            return forced(.zlib)
        case .zstd:
            return forced(.zstd)
        case .auto:
            guard let best = available.first, !fileIsCompressed, backoffRemaining == 0 else { return nil }
            let level = controller.level
            return level > 0 ? Choice(best, level: level) : nil
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

    /// The forced algorithm if the peers have it, else the best they have; at the default level.
    private func forced(_ algorithm: CompressionAlgorithm) -> Choice? {
        let chosen = available.contains(algorithm) ? algorithm : available.first
        return chosen.map { Choice($0, level: $0.defaultLevel) }
    }
}
