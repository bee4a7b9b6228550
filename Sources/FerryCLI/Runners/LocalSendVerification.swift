import FerrySecurity
import FerryWire

/// What a person compares to know a LocalSend device on first contact (docs/LOCALSEND.md, "Trust"; SECURITY.md,
/// "First contact with a LocalSend device").
///
/// LocalSend has no pairing code. Its apps 1.18 have a Verify page (a device's details, or the Verify button of
/// the sending and receiving screens) whose "Text" tab shows both devices' fingerprints, in upper-case hex, sorted
/// as text and joined. ferry prints the same text from the same two hashes (ours and the certificate the peer
/// presented): when both screens agree, each side saw the other's real certificate. Apps 1.15 to 1.17 have no
/// Verify page; they show their own fingerprint (64 upper-case hex digits) under About LocalSend, Debugging,
/// Security, which is the line ferry prints as the device's fingerprint.
enum LocalSendVerification {
    /// The text of LocalSend's Verify page ("Text" tab, apps 1.18) for the devices whose certificate hashes are
    /// `own` and `peer`: both as 64 upper-case hex digits, sorted as text (byte order, as the app's string sort),
    /// joined: 128 characters. The one function both directions (receive's prompt, send's first contact) show.
    static func verifyPageText(own: DeviceID, peer: DeviceID) -> String {
        [fingerprint(own), fingerprint(peer)]
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .joined()
    }

    /// A fingerprint as every LocalSend app shows and sends it: 64 upper-case hex digits.
    static func fingerprint(_ id: DeviceID) -> String {
        LocalSendFingerprint(deviceID: id).description
    }

    /// `verifyPageText` cut into its two halves (each half is one device's fingerprint), for a terminal line each.
    static func verifyPageLines(own: DeviceID, peer: DeviceID) -> [String] {
        let text = verifyPageText(own: own, peer: peer)
        let middle = text.index(text.startIndex, offsetBy: text.count / 2)
        return [String(text[..<middle]), String(text[middle...])]
    }
}

/// A LocalSend device as a person is asked about it: what it calls itself (its claims, escaped when shown) and the
/// certificate hash that identifies it.
struct LocalSendContact: Sendable, Equatable {
    /// Its alias (a name it chose, not an identity).
    var alias: String
    /// The SHA-256 of the certificate it presented: its device ID and LocalSend fingerprint.
    var fingerprint: DeviceID
    /// The hash of our LocalSend certificate, the other half of the Verify page.
    var ownFingerprint: DeviceID
    /// Its `deviceModel` ("Pixel 7", "Linux"), when it registered with this certificate; nil when not known.
    var deviceModel: String?
    /// Its `deviceType` ("mobile", "desktop", ...), when it registered with this certificate; nil when not known.
    var deviceType: String?
    /// The address it registered from with this certificate; nil when not known.
    var address: String?

    /// The prompt's lines about the device, before the question (each fits 80 columns but the first):
    ///
    /// ```
    /// From LocalSend device 'Nice Orange' (Pixel 7, mobile, at 192.168.1.20); LocalSend has no pairing code:
    ///   fingerprint 247E5F...
    ///   its Verify page (LocalSend 1.18: tap Verify, then Text) must show:
    ///     0A5C... (64)
    ///     247E... (64)
    ///   (LocalSend 1.15 to 1.17: About LocalSend > Debugging > Security shows its fingerprint)
    /// ```
    func lines() -> [String] {
        let details =
            [deviceModel, deviceType].compactMap { $0.map { TerminalText.escape($0) } }
            + [address.map { "at \(TerminalText.escape($0))" }].compactMap { $0 }
        let aside = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        let verify = LocalSendVerification.verifyPageLines(own: ownFingerprint, peer: fingerprint)
        return [
            "From LocalSend device '\(TerminalText.escape(alias))'\(aside); LocalSend has no pairing code:",
            "  fingerprint \(LocalSendVerification.fingerprint(fingerprint))",
            "  its Verify page (LocalSend 1.18: tap Verify, then Text) must show:",
        ] + verify.map { "    " + $0 } + [
            "  (LocalSend 1.15 to 1.17: About LocalSend > Debugging > Security shows its fingerprint)"
        ]
    }
}
