import FerryWire

/// Decode -> encode -> decode checks for the frame payloads a peer sends.
///
/// Why: a decoder that accepts bytes its own encoder would refuse, or that loses or invents a field, breaks a
/// peer silently rather than by a trap. Encodings are canonical (no reserved fields in frames; trailing bytes are
/// ignored), so a decoded message re-encodes to a prefix of the payload it came from and decodes to itself.
public enum RoundTrip {
    /// Decodes `frame` as a session message and checks the round trip; returns the message, or nil when the
    /// decoder refused the frame (a `WireError`, which is fine).
    @discardableResult
    public static func session(_ frame: Frame) -> SessionMessage? {
        guard let message = try? SessionMessage(frame: frame) else { return nil }
        Invariant.check(message.kind == frame.kind, "session \(frame.kind) decodes as \(message.kind)")
        Invariant.check((try? message.validate()) != nil, "decoded session \(frame.kind) does not validate")
        let encoded = message.frame
        if case .ignored = message {
            Invariant.check(encoded.payload.isEmpty, "an ignored frame re-encodes with a payload")
        } else {
            checkPrefix(encoded, of: frame)
        }
        Invariant.check((try? SessionMessage(frame: encoded)) == message, "session \(frame.kind) round trip differs")
        return message
    }

    /// Decodes `frame` as a transfer message and checks the round trip; returns the message, or nil when the
    /// decoder refused the frame.
    @discardableResult
    public static func transfer(_ frame: Frame) -> TransferMessage? {
        guard let message = try? TransferMessage(frame: frame) else { return nil }
        Invariant.check(message.kind == frame.kind, "transfer \(frame.kind) decodes as \(message.kind)")
        Invariant.check((try? message.validate()) != nil, "decoded transfer \(frame.kind) does not validate")
        let encoded = message.frame
        checkPrefix(encoded, of: frame)
        Invariant.check(encoded.encoded() == message.encoded(), "transfer frame and encoded() disagree")
        Invariant.check((try? TransferMessage(frame: encoded)) == message, "transfer \(frame.kind) round trip differs")
        return message
    }

    private static func checkPrefix(_ encoded: Frame, of frame: Frame) {
        Invariant.check(encoded.kind == frame.kind, "\(frame.kind) re-encodes as \(encoded.kind)")
        Invariant.check(
            encoded.payload.count <= frame.payload.count
                && encoded.payload[...] == frame.payload.prefix(encoded.payload.count),
            "\(frame.kind) re-encodes to \(encoded.payload.count) bytes that are not a prefix of the payload")
    }
}
