import FerrySecurity
import FerrySession
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

    /// The command that pins the device whose certificate hashes to `id`, for a line telling a person how, to be
    /// pasted into a shell: a plain name (letters, digits, `.`, `_`, `-`) as it is, another in single quotes (a quote
    /// in it as `'\''`), so that pasting it runs nothing the device chose; the placeholder NAME for none, or for one
    /// that a terminal would not show as it is (control characters: what is pasted would not be what was read).
    static func pinCommand(_ id: DeviceID, name: String) -> String {
        "ferry trust add --localsend \(fingerprint(id)) --name \(shellWord(name))"
    }

    /// `name` as one shell word for `pinCommand`.
    static func shellWord(_ name: String) -> String {
        guard !name.isEmpty, TerminalText.escape(name) == name else { return "NAME" }
        let plain = name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "." || scalar == "_" || scalar == "-")
        }
        if plain, !name.hasPrefix("-") { return name }
        return "'" + name.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// Pins a LocalSend device a person confirmed (`always` on either side): kind `localsend`, its `alias`, and the
    /// alias as the name unless another pinned device has that name (aliases are not unique: two phones may both be
    /// "iPhone"), then without a name (`say` tells how to give it one); also without one when the alias is no valid
    /// name (too long, nothing visible) or looks like a device ID or a prefix of one (the device chose it: `trust
    /// remove` must not take it for another device's ID). Returns the name it pinned.
    @discardableResult
    static func pin(_ id: DeviceID, alias shown: String, in store: TrustStore, say: (String) -> Void) throws
        -> String
    {
        let alias = String(decoding: shown.utf8.prefix(TrustStore.maximumAliasBytes), as: UTF8.self)
        var name =
            alias.utf8.count <= GlobalOptions.maximumNameBytes && !DisplayNameMatch.key(alias).isEmpty
                && !TrustCommand.looksLikeIDOrPrefix(alias) ? alias : ""
        if !name.isEmpty, let other = try store.entry(named: name), other.deviceID != id {
            say(
                "'\(TerminalText.escape(name))' is the name of another trusted peer: this LocalSend device is pinned"
                    + " without a name (\(pinCommand(id, name: "")) gives it one)")
            name = ""
        }
        try store.pin(id, name: name, kind: .localsend, alias: alias)
        return name
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
    /// With `sending`, the first line introduces the device as a receiver ("To LocalSend device ...": `ferry send`
    /// asks before the first request byte).
    func lines(sending: Bool = false) -> [String] {
        let details =
            [deviceModel, deviceType].compactMap { $0.map { TerminalText.escape($0) } }
            + [address.map { "at \(TerminalText.escape($0))" }].compactMap { $0 }
        var aside = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
        // A device known by its address alone (nobody announced it) has no alias to show.
        var named = " '\(TerminalText.escape(alias))'"
        if alias.isEmpty, let address {
            named = " at \(TerminalText.escape(address))"
            aside = ""
        }
        let verify = LocalSendVerification.verifyPageLines(own: ownFingerprint, peer: fingerprint)
        return [
            "\(sending ? "To" : "From") LocalSend device\(named)\(aside); LocalSend has no"
                + " pairing code:",
            "  fingerprint \(LocalSendVerification.fingerprint(fingerprint))",
            "  its Verify page (LocalSend 1.18: tap Verify, then Text) must show:",
        ] + verify.map { "    " + $0 } + [
            "  (LocalSend 1.15 to 1.17: About LocalSend > Debugging > Security shows its fingerprint)"
        ]
    }
}
