import FerryWire

/// The 6-digit code both people compare on first contact (Bluetooth's numeric comparison).
///
/// Derived with the TLS exporter from the link's TLS session, both device IDs and both pairing nonces: the two
/// ends of one TLS session get the same code; a man in the middle holds two TLS sessions (one with each side), so
/// the two sides see different codes unless he guesses. The nonces make that a guess: the TLS server picks its
/// handshake values after seeing the client's, so with the exporter alone a man in the middle could try server
/// values until the code matches the other side's; but the acceptor commits to its nonce (in its hello) before
/// the initiator sends its own, and reveals it only then, so neither side can steer the code after seeing the
/// other's part (one chance in a million per attempt).
public enum PairingCode {
    /// Exporter label; the context is both device IDs (lower one first), the initiator's nonce, the acceptor's.
    public static let exporterLabel = "EXPORTER-ferry-pairing-code"

    /// The code for this link, nil before the handshake.
    public static func derive(
        from stream: TLSStream, local: DeviceID, peer: DeviceID, initiatorNonce: [UInt8], acceptorNonce: [UInt8]
    ) -> String? {
        let ids = [local.bytes, peer.bytes].sorted { $0.lexicographicallyPrecedes($1) }
        let context = ids[0] + ids[1] + initiatorNonce + acceptorNonce
        guard let bytes = stream.exportKeyingMaterial(label: exporterLabel, context: context, length: 8) else {
            return nil
        }
        return code(from: bytes)
    }

    /// 32 random bytes from the system's cryptographic generator, for a link's pairing nonce.
    public static func nonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Six decimal digits from 8 exported bytes (big-endian, modulo one million; the bias is below 10^-13).
    static func code(from bytes: [UInt8]) -> String {
        let value = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let digits = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// "123 456": the code as people read it aloud.
    public static func readable(_ code: String) -> String {
        guard code.count == 6 else { return code }
        return String(code.prefix(3)) + " " + String(code.suffix(3))
    }
}
