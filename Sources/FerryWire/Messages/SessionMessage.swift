/// A decoded frame of the session protocol: the vocabulary two linked peers speak.
///
/// Decoding is where forward compatibility is decided: an unknown kind with the ignorable bit becomes
/// `.ignored` (the caller skips it), an unknown critical kind is an error that closes the link, and known
/// fixed-layout payloads ignore trailing bytes a newer minor version may add.
///
/// | kind   | case              | payload |
/// | ------ | ----------------- | ------- |
/// | 0x0001 | hello             | see `Hello` |
/// | 0x0002 | connectionRequest | empty (extra bytes ignored) |
/// | 0x0003 | accept            | empty (extra bytes ignored) |
/// | 0x0004 | deny              | see `Deny` |
/// | 0x0005 | message           | application bytes, 0...16 MiB |
/// | 0x0006 | heartbeat         | see `Heartbeat` |
/// | 0x0007 | goodbye           | see `Goodbye` |
/// | 0x0008 | pairing           | a 32-byte pairing nonce (extra bytes ignored) |
/// | 0x0100-0x01FF | transfer     | the whole frame, decoded by the transfer layer (`TransferMessage`) |
public enum SessionMessage: Equatable, Sendable {
    case hello(Hello)
    case connectionRequest
    case accept
    case deny(Deny)
    case message([UInt8])
    case heartbeat(Heartbeat)
    case goodbye(Goodbye)
    /// A pairing nonce: the initiator's, sent before its connection request; the acceptor's, revealed in answer
    /// to the request (it must match the commitment in the acceptor's hello).
    case pairing([UInt8])
    /// A frame of the transfer protocol (kinds 0x0100-0x01FF), passed whole to the transfer layer.
    case transfer(Frame)
    /// An unknown ignorable kind, skipped.
    case ignored(FrameKind)

    /// Throws unknownCriticalFrame for unknown critical kinds, malformed/invalidField for bad payloads.
    public init(frame: Frame) throws(WireError) {
        let payload = frame.payload[...]
        switch frame.kind {
        case .hello:
            self = .hello(try Hello(payload: payload))
        case .connectionRequest:
            self = .connectionRequest
        case .accept:
            self = .accept
        case .deny:
            self = .deny(try Deny(payload: payload))
        case .message:
            guard payload.count <= Limits.maxMessageSize else {
                throw .payloadTooLarge(length: payload.count, limit: Limits.maxMessageSize)
            }
            self = .message(frame.payload)
        case .heartbeat:
            self = .heartbeat(try Heartbeat(payload: payload))
        case .goodbye:
            self = .goodbye(try Goodbye(payload: payload))
        case .pairing:
            var reader = ByteReader(payload, context: "pairing")
            self = .pairing(try reader.readBytes(count: Hello.pairingFieldLength, "nonce"))
        case let kind where FrameKind.transferKinds.contains(kind.rawValue):
            self = .transfer(frame)
        default:
            guard frame.kind.isIgnorable else { throw .unknownCriticalFrame(kind: frame.kind.rawValue) }
            self = .ignored(frame.kind)
        }
    }

    /// The frame kind of this message.
    public var kind: FrameKind {
        switch self {
        case .hello: .hello
        case .connectionRequest: .connectionRequest
        case .accept: .accept
        case .deny: .deny
        case .message: .message
        case .heartbeat: .heartbeat
        case .goodbye: .goodbye
        case .pairing: .pairing
        case .transfer(let frame): frame.kind
        case .ignored(let kind): kind
        }
    }

    /// Throws `invalidField` / `payloadTooLarge` when this value cannot be encoded: strings over their limits,
    /// a message over `Limits.maxMessageSize`. Call it on anything built from user input before `frame`.
    public func validate() throws(WireError) {
        switch self {
        case .hello(let hello): try hello.validate()
        case .deny(let deny): try deny.validate()
        case .goodbye(let goodbye): try goodbye.validate()
        case .message(let bytes):
            guard bytes.count <= Limits.maxMessageSize else {
                throw .payloadTooLarge(length: bytes.count, limit: Limits.maxMessageSize)
            }
        case .transfer(let frame):
            guard frame.payload.count <= Limits.maxFramePayload else {
                throw .payloadTooLarge(length: frame.payload.count, limit: Limits.maxFramePayload)
            }
        case .pairing(let nonce):
            guard nonce.count == Hello.pairingFieldLength else { throw .invalidField("pairing: nonce of \(nonce.count) bytes") }
        case .connectionRequest, .accept, .heartbeat, .ignored:
            break
        }
    }

    /// The frame carrying this message. Precondition: `validate()` passes. `.ignored` is never sent; it
    /// yields an empty frame of its kind.
    public var frame: Frame {
        var writer = ByteWriter()
        switch self {
        case .hello(let hello): hello.write(to: &writer)
        case .deny(let deny): deny.write(to: &writer)
        case .heartbeat(let heartbeat): heartbeat.write(to: &writer)
        case .goodbye(let goodbye): goodbye.write(to: &writer)
        case .pairing(let nonce):
            precondition(nonce.count == Hello.pairingFieldLength, "a pairing nonce is 32 bytes")
            writer.write(bytes: nonce)
        case .message(let bytes):
            precondition(bytes.count <= Limits.maxMessageSize, "message larger than Limits.maxMessageSize")
            return Frame(kind: .message, payload: bytes)
        case .transfer(let frame):
            return frame
        case .connectionRequest, .accept, .ignored:
            break
        }
        return Frame(kind: kind, payload: writer.bytes)
    }

    /// Header and payload of `frame`, ready to write to the link.
    public func encoded() -> [UInt8] {
        frame.encoded()
    }
}
