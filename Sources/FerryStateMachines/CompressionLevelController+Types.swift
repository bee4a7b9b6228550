/// The controller's vocabulary: the ladder's steps, what the sender measures of a chunk, what an epoch measured.
extension CompressionLevelController {
    /// One step of the ladder: a level and what it costs relative to the first compressing step.
    public struct Step: Sendable, Equatable {
        /// The level (0: raw).
        public var level: Int
        /// Seconds of compressing per byte relative to level 1.
        public var cost: Double
        /// Compressed size relative to level 1.
        public var size: Double

        /// A step at zstd `level` (0 = raw), with its cost and size relative to level 1.
        public init(level: Int, cost: Double, size: Double) {
            self.level = level
            self.cost = cost
            self.size = size
        }
    }

    /// What the sender measured of one chunk: from asking for it to asking for the next.
    public struct Pace: Sendable, Equatable {
        /// Its raw length.
        public var rawBytes: Int
        /// The whole cycle: reading, compressing, queueing, waiting.
        public var seconds: Double
        /// Of those, waiting for the link: the window was full or the link writer above its high-water mark.
        public var waitedSeconds: Double
        /// Of those, compressing it (0 when it went raw).
        public var compressSeconds: Double
        /// Raw bytes sent and not yet acknowledged once it was queued (the window's fill; 0 when unknown).
        public var inFlightBytes: Int
        /// Its length on the wire, compressed or not (0 when unknown).
        public var wireBytes: Int
        /// Of `waitedSeconds`, the waits for the window that ended with less than `linkQueueBytes` unacknowledged on
        /// the link: everything sent had crossed it, so the wait was for the receiving process, not the link.
        public var receiverWaitedSeconds: Double

        /// One chunk's measurements, in bytes and seconds.
        public init(
            rawBytes: Int, seconds: Double, waitedSeconds: Double, compressSeconds: Double, inFlightBytes: Int = 0,
            wireBytes: Int = 0, receiverWaitedSeconds: Double = 0
        ) {
            self.rawBytes = rawBytes
            self.seconds = seconds
            self.waitedSeconds = waitedSeconds
            self.compressSeconds = compressSeconds
            self.inFlightBytes = inFlightBytes
            self.wireBytes = wireBytes
            self.receiverWaitedSeconds = receiverWaitedSeconds
        }
    }

    /// What an epoch measured.
    public struct Epoch: Sendable, Equatable {
        /// Raw bytes per second.
        public var throughput: Double
        /// The share of the cycle spent waiting for the link.
        public var waited: Double
        /// The share of the cycle spent waiting for the receiver (the link holding nothing).
        public var receiverWaited: Double = 0
    }
}
