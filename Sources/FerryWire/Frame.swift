/// One unit on a reliable link: a kind and an opaque payload.
///
/// Frames delimit messages in the TCP byte stream; the kind says how to read the payload
/// (see `SessionMessage`).
///
/// ```
///  0        2                 6
/// +--------+-----------------+------------------+
/// | kind   | length          | payload          |
/// | u16 BE | u32 BE          | length bytes     |
/// +--------+-----------------+------------------+
/// ```
public struct Frame: Equatable, Sendable {
    /// Length of the kind + length header.
    public static let headerLength = 6

    /// What the frame is (the header's `u16` kind).
    public var kind: FrameKind
    /// The bytes after the header, as many as the header's length says.
    public var payload: [UInt8]

    /// A frame of `kind` carrying `payload`.
    public init(kind: FrameKind, payload: [UInt8]) {
        self.kind = kind
        self.payload = payload
    }

    /// Header followed by payload.
    public func encoded() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.headerLength + payload.count)
        encode(into: &buffer)
        return buffer
    }

    /// Appends header and payload to `buffer`. Precondition: the payload fits a u32 length.
    public func encode(into buffer: inout [UInt8]) {
        precondition(payload.count <= Int(UInt32.max), "frame payload longer than UInt32.max")
        ByteWriter.append(to: &buffer) { writer in
            writer.write(kind.rawValue)
            writer.write(UInt32(payload.count))
            writer.write(bytes: payload)
        }
    }
}
