import FerryWire

/// The 6-digit code both people compare on first contact (Bluetooth's numeric comparison).
///
/// Derived with the TLS exporter from the link's TLS session and both device IDs: the two ends of one TLS
/// session get the same code; a man in the middle holds two TLS sessions (one with each side), so the two sides
/// see different codes unless he guesses, one chance in a million per attempt.
public enum PairingCode {
    /// Exporter label; the context is both device IDs, lower one first.
    public static let exporterLabel = "EXPORTER-ferry-pairing-code"

    /// The code for this link, nil before the handshake.
    public static func derive(from stream: TLSStream, local: DeviceID, peer: DeviceID) -> String? {
        let ids = [local.bytes, peer.bytes].sorted { $0.lexicographicallyPrecedes($1) }
        guard let bytes = stream.exportKeyingMaterial(label: exporterLabel, context: ids[0] + ids[1], length: 8) else {
            return nil
        }
        return code(from: bytes)
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
