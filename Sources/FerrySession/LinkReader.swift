import FerrySecurity
import FerryWire

/// What a link's reader hands the session.
enum LinkInput: Sendable {
    /// Frames that arrived, in order; none when only bytes of a frame still under way arrived (the link is alive).
    case frames([Frame])
    /// The peer sent a frame header longer than the link takes (`frameTooLarge`); nothing after it is decoded.
    case refused(WireError)
    /// Bytes read and dropped from a link the session closed.
    case drained
    /// The stream ended (the peer closed its side, or a transport error).
    case end
}

/// What the session tells a link's reader to do next.
enum LinkReading: Sendable {
    /// Decode frames, taking payloads up to this length.
    case frames(maximumPayloadLength: Int)
    /// The link is closed: read and drop bytes until the peer closes too (ARCHITECTURE "How a link closes").
    case drain
    /// Stop reading.
    case stop
}

/// The reading half of a link: decodes frames as `TLSStream` decrypts them, straight into each frame's own payload
/// array, so the bytes of a chunk are copied once between OpenSSL and the transfer engine's `pwrite`.
///
/// The link's state machine decides what a frame may be (`LinkStateMachine.maximumPayloadLength`: 1 KiB until the
/// connection is accepted); the reader learns it after every delivery. A header above the limit it knows is not
/// refused at once: the frames before it are delivered first, and the header is checked again against the limit the
/// session returns, so a limit raised by one of those frames (the acceptor's `accept`) applies to the next frame
/// exactly as if the machine decoded the bytes itself. A frame's payload is allocated only after its header passed.
struct LinkReader {
    let stream: TLSStream
    private var decoder = FrameDecoder(maximumPayloadLength: Limits.maxHelloPayload)
    private var draining = false

    init(stream: TLSStream) {
        self.stream = stream
    }

    /// The next input for the session: frames already decoded, else what one read brings.
    mutating func next() async throws -> LinkInput {
        if draining {
            let bytes = try await stream.read(maxBytes: TLSStream.inputLimit)
            return bytes.isEmpty ? .end : .drained
        }
        var frames: [Frame] = []
        do {
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        } catch {
            if frames.isEmpty { return .refused(error) }
        }
        if !frames.isEmpty { return .frames(frames) }
        let (read, byteCount) = try await stream.read(into: &decoder)
        return byteCount == 0 ? .end : .frames(read)
    }

    /// Takes the session's answer; false when reading stops.
    mutating func apply(_ reading: LinkReading) -> Bool {
        switch reading {
        case .frames(let limit):
            decoder.maximumPayloadLength = limit
        case .drain:
            draining = true
            decoder = FrameDecoder()
        case .stop:
            return false
        }
        return true
    }
}
