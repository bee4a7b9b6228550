import FerryWire

/// A certificate's SHA-256 written as LocalSend writes it: 64 upper-case hex digits.
///
/// The same hash as a ferry device ID (the SHA-256 of the certificate's DER), in the form LocalSend apps announce,
/// pin and show on their Verify page (docs/LOCALSEND.md, "Certificates and TLS"). Parsing ignores case, since
/// `localsend-cli` writes lower case; writing is upper case, as the apps do, because the Verify page compares
/// fingerprints as strings.
public struct LocalSendFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The hash, as ferry's own type for a certificate hash.
    public let deviceID: DeviceID

    /// The fingerprint of the certificate whose hash is `deviceID`.
    public init(deviceID: DeviceID) {
        self.deviceID = deviceID
    }

    /// The fingerprint of a certificate given in DER.
    public init(certificateDER: [UInt8]) {
        deviceID = DeviceIdentity.deviceID(ofCertificate: certificateDER)
    }

    /// Parses exactly 64 hex digits, either case; nil for anything else (a random string from an app with HTTPS
    /// off, a truncated or padded value).
    public init?(hex text: String) {
        guard text.utf8.count == DeviceID.length * 2, let bytes = Hex.bytes(text.utf8), let id = DeviceID(bytes: bytes)
        else { return nil }
        deviceID = id
    }

    /// 64 upper-case hex digits.
    public var description: String {
        Hex.string(deviceID.bytes).uppercased()
    }

}
