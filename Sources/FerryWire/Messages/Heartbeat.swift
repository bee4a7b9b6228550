/// A liveness probe; a link silent for longer than the disconnect timeout is considered lost.
///
/// The sequence number lets logs match heartbeats; the receiver does not answer them. Payload (kind 0x0006):
///
/// ```
/// +--------------------+--------------------------+
/// | sequence u64       | trailing bytes (ignored) |
/// +--------------------+--------------------------+
/// ```
public struct Heartbeat: Equatable, Sendable {
    /// A counter of the sender's heartbeats on this link, for logs.
    public var sequence: UInt64

    /// A heartbeat numbered `sequence`.
    public init(sequence: UInt64) {
        self.sequence = sequence
    }
}

extension Heartbeat {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "heartbeat")
        sequence = try reader.readUInt64("sequence")
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        writer.write(sequence)
    }
}
