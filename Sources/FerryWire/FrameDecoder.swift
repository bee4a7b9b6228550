/// Incremental decoder of the frame stream of a reliable link: append bytes, then call `nextFrame()` until it
/// returns nil.
///
/// TCP delivers the stream in arbitrary pieces; this type reassembles frames from them without ever trusting
/// a peer-supplied length: a header whose length exceeds `maximumPayloadLength` throws `frameTooLarge` as soon
/// as its 6 bytes are seen, before the payload is buffered. Consumed bytes are dropped by advancing a read
/// index and compacting only when the consumed part outweighs the rest, so the cost is amortised O(n) in the
/// number of bytes, however many frames pass through.
public struct FrameDecoder: Sendable {
    /// Largest payload accepted. The session starts at `Limits.maxHelloPayload` and raises it to
    /// `Limits.maxFramePayload` once the connection is accepted.
    public var maximumPayloadLength: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// Above this capacity an emptied buffer gives its memory back instead of keeping it for the next frame.
    private static let retainedCapacity = 256 * 1024

    /// A decoder that refuses frames longer than `maximumPayloadLength` from their header, before buffering them
    /// (the small pre-authentication limit by default; raise it once the link is accepted).
    public init(maximumPayloadLength: Int = Limits.maxHelloPayload) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// Bytes received but not yet returned as a frame (or preface).
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the link; frames are taken out with `nextFrame()`.
    public mutating func append(_ bytes: [UInt8]) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the link; frames are taken out with `nextFrame()`.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    ///
    /// Throws `frameTooLarge` as soon as a header with a length above `maximumPayloadLength` is buffered. After
    /// a throw the stream cannot be resynchronised: the caller closes the link.
    public mutating func nextFrame() throws(WireError) -> Frame? {
        guard bufferedByteCount >= Frame.headerLength else { return nil }
        let kind = UInt16(buffer[readIndex]) << 8 | UInt16(buffer[readIndex + 1])
        var length: UInt32 = 0
        for offset in 2..<Frame.headerLength {
            length = length << 8 | UInt32(buffer[readIndex + offset])
        }
        guard let payloadLength = Int(exactly: length), payloadLength <= maximumPayloadLength else {
            throw .frameTooLarge(length: length, limit: maximumPayloadLength)
        }
        guard bufferedByteCount - Frame.headerLength >= payloadLength else { return nil }
        let payloadStart = readIndex + Frame.headerLength
        let payload = Array(buffer[payloadStart..<(payloadStart + payloadLength)])
        readIndex = payloadStart + payloadLength
        if readIndex == buffer.count {
            reset()
        }
        return Frame(kind: FrameKind(kind), payload: payload)
    }

    /// Removes and returns buffered bytes that are not yet a frame (leftovers, e.g. to forward them unchanged).
    public mutating func takeBufferedBytes() -> [UInt8] {
        let rest = Array(buffer[readIndex...])
        reset()
        return rest
    }

    private mutating func reset() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
        readIndex = 0
    }

    /// Drops consumed bytes when they are at least half of the buffer: each byte is moved at most as often as
    /// bytes before it were consumed, which keeps the total work linear.
    private mutating func compactIfWorthwhile() {
        guard readIndex > 0, readIndex >= buffer.count - readIndex else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
