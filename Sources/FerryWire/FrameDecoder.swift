/// Incremental decoder of the frame stream of a reliable link: give it bytes, then call `nextFrame()` until it
/// returns nil.
///
/// TCP delivers the stream in arbitrary pieces; this type reassembles frames from them without ever trusting
/// a peer-supplied length: a header whose length exceeds `maximumPayloadLength` throws `frameTooLarge` as soon
/// as its 6 bytes are seen, before the payload is buffered or allocated.
///
/// Bytes come in two ways. `append` copies a piece of the stream in (what tests, proxies and fuzzers do).
/// `fill` lets the caller write the stream's next bytes in place, the way a link reads them (`TLSStream` decrypts
/// straight into it): it offers the rest of the next header, then the unfilled rest of the frame's own payload
/// array, so a payload is written once, where the returned `Frame` keeps it, and never copied again.
///
/// A frame whose payload is not complete when its header is read gets its payload array at once (its length was
/// checked against the limit; pages are only touched as bytes arrive); bytes appended later go straight into it.
/// A frame that arrives whole within one `append` is copied out of the buffer. Consumed bytes are dropped by
/// advancing a read index and compacting only when the consumed part outweighs the rest, so the cost is amortised
/// O(n) in the number of bytes, however many frames pass through.
public struct FrameDecoder: Sendable {
    /// Largest payload accepted. The session starts at `Limits.maxHelloPayload` and raises it to
    /// `Limits.maxFramePayload` once the connection is accepted.
    public var maximumPayloadLength: Int

    /// A frame whose header was read and whose payload is being written in place.
    private struct Pending: Sendable {
        var header: [UInt8]
        var kind: FrameKind
        var payload: [UInt8]
        var filled: Int

        var missing: Int { payload.count - filled }
    }

    /// Stream bytes after `pending` (or all of them when there is none) not yet part of a frame. While `pending`
    /// misses bytes, this is empty: new bytes go into the payload first.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var pending: Pending?

    /// Above this capacity an emptied buffer gives its memory back instead of keeping it for the next frame.
    private static let retainedCapacity = 256 * 1024

    /// A decoder that refuses frames longer than `maximumPayloadLength` from their header, before buffering them
    /// (the small pre-authentication limit by default; raise it once the link is accepted).
    public init(maximumPayloadLength: Int = Limits.maxHelloPayload) {
        self.maximumPayloadLength = maximumPayloadLength
    }

    /// Bytes received but not yet returned as a frame.
    public var bufferedByteCount: Int {
        (pending.map { $0.header.count + $0.filled } ?? 0) + buffer.count - readIndex
    }

    /// Adds bytes read from the link; frames are taken out with `nextFrame()`.
    public mutating func append(_ bytes: [UInt8]) {
        append(bytes[...])
    }

    /// Adds bytes read from the link; frames are taken out with `nextFrame()`.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        var rest = bytes
        if var frame = pending, frame.missing > 0 {
            pending = nil  // uniquely referenced while it is written
            let count = min(frame.missing, rest.count)
            let filled = frame.filled
            frame.payload.withUnsafeMutableBytes { payload in
                rest.prefix(count).withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: payload[filled..<(filled + count)]).copyMemory(from: source)
                }
            }
            frame.filled += count
            rest = rest.dropFirst(count)
            pending = frame
        }
        guard !rest.isEmpty else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: rest)
    }

    /// How many bytes `fill` would take now: the rest of the next header, or the rest of the payload of the frame
    /// under way. Zero when a complete frame (or a header that throws) waits for `nextFrame()`.
    public var fillableByteCount: Int {
        if let pending { return pending.missing }
        return max(0, Frame.headerLength - (buffer.count - readIndex))
    }

    /// Lets `write` put the stream's next bytes in place and returns how many it wrote (at most its buffer's
    /// count, which is `fillableByteCount`): the rest of the next frame header, or the unfilled rest of the payload
    /// of the frame under way. Call `nextFrame()` after each fill; a fill offers nothing (and returns 0 without
    /// calling `write`) while a frame waits for it.
    @discardableResult
    public mutating func fill(_ write: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        let wanted = fillableByteCount
        guard wanted > 0 else { return 0 }
        if var frame = pending {
            pending = nil  // uniquely referenced while it is written
            let filled = frame.filled
            let written = frame.payload.withUnsafeMutableBytes { payload in
                write(UnsafeMutableRawBufferPointer(rebasing: payload[filled...]))
            }
            precondition((0...wanted).contains(written), "FrameDecoder.fill: wrote \(written) of \(wanted) bytes")
            frame.filled += written
            pending = frame
            return written
        }
        compactIfWorthwhile()
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: wanted))
        let written = buffer.withUnsafeMutableBytes { bytes in
            write(UnsafeMutableRawBufferPointer(rebasing: bytes[start...]))
        }
        precondition((0...wanted).contains(written), "FrameDecoder.fill: wrote \(written) of \(wanted) bytes")
        buffer.removeLast(wanted - written)
        return written
    }

    /// The next complete frame, or nil when more bytes are needed.
    ///
    /// Throws `frameTooLarge` as soon as a header with a length above `maximumPayloadLength` is buffered. After
    /// a throw the stream cannot be resynchronised unless the limit is raised: the caller closes the link.
    public mutating func nextFrame() throws(WireError) -> Frame? {
        if let frame = pending {
            guard frame.missing == 0 else { return nil }
            pending = nil
            return Frame(kind: frame.kind, payload: frame.payload)
        }
        guard bufferedByteCount >= Frame.headerLength else { return nil }
        let kind = UInt16(buffer[readIndex]) << 8 | UInt16(buffer[readIndex + 1])
        var length: UInt32 = 0
        for offset in 2..<Frame.headerLength {
            length = length << 8 | UInt32(buffer[readIndex + offset])
        }
        guard let payloadLength = Int(exactly: length), payloadLength <= maximumPayloadLength else {
            throw .frameTooLarge(length: length, limit: maximumPayloadLength)
        }
        let payloadStart = readIndex + Frame.headerLength
        let available = buffer.count - payloadStart
        guard available < payloadLength else {
            let payload = Array(buffer[payloadStart..<(payloadStart + payloadLength)])
            readIndex = payloadStart + payloadLength
            if readIndex == buffer.count {
                reset()
            }
            return Frame(kind: FrameKind(kind), payload: payload)
        }
        // The payload is not all here: give it its own array now, so that the rest is written there directly.
        // Every byte past `filled` is written (by `append` or `fill`) before the frame is returned; none is read
        // before.
        let header = Array(buffer[readIndex..<payloadStart])
        let payload = buffer.withUnsafeBytes { bytes in
            [UInt8](unsafeUninitializedCapacity: payloadLength) { destination, count in
                UnsafeMutableRawBufferPointer(destination).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: bytes[payloadStart...]))
                count = payloadLength
            }
        }
        reset()
        pending = Pending(header: header, kind: FrameKind(kind), payload: payload, filled: available)
        return nil
    }

    /// Removes and returns buffered bytes that are not yet a frame (leftovers, e.g. to forward them unchanged).
    public mutating func takeBufferedBytes() -> [UInt8] {
        var rest: [UInt8] = []
        if let frame = pending {
            rest = frame.header + frame.payload[..<frame.filled]
            pending = nil
        }
        rest += buffer[readIndex...]
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
