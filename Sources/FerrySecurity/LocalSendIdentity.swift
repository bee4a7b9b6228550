import COpenSSL
import FerryWire

/// The key and self-signed certificate this install presents to LocalSend peers: RSA-2048, because apps up to 1.15
/// verify the server's signature with BoringSSL's defaults, which leave out Ed25519 (ferry's own key type), and RSA
/// is what every LocalSend app generates and so takes (docs/LOCALSEND.md, "Certificates and TLS").
///
/// Bound to the install by where it lives, not by a signature: `localsend-identity.pem` beside `identity.pem`, with
/// the same file rules. The certificate names no ferry device ID (an unsigned claim proves nothing, and TLS 1.2
/// shows certificates to any listener). Its validity runs from 2000-01-01 to 9999-12-31 (RFC 5280's "no expiry"):
/// LocalSend 1.18 refuses a certificate whose start is ahead of the phone's clock, and a fixed start, far back,
/// works whatever the phone's clock says and does not date this install.
///
/// `@unchecked Sendable`: the OpenSSL key and certificate are never changed after `init`, and OpenSSL allows
/// concurrent read-only use of both.
public final class LocalSendIdentity: @unchecked Sendable {
    /// Name of the file in the configuration directory.
    public static let fileName = "localsend-identity.pem"
    /// The key size: what LocalSend apps generate, and the smallest that webpki (LocalSend 1.18) accepts.
    static let keyBits: Int32 = 2048
    /// notBefore and notAfter, as ASN.1 times.
    static let validFrom = "20000101000000Z"
    static let validUntil = "99991231235959Z"

    /// The certificate, DER-encoded: what LocalSend peers hash into our fingerprint.
    public let certificateDER: [UInt8]
    /// The SHA-256 of `certificateDER`, as LocalSend peers announce, pin and show it.
    public let fingerprint: LocalSendFingerprint
    let privateKey: OpaquePointer
    let certificate: OpaquePointer

    /// A new key and self-signed certificate, in memory only.
    public static func generate() throws(SecurityError) -> LocalSendIdentity {
        guard let key = ferry_generate_rsa2048() else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not generate an RSA key"))
        }
        // SHA-256 with RSA: what every LocalSend stack verifies.
        let certificate = try SelfSignedCertificate.make(
            for: key, validity: .fixed(from: validFrom, until: validUntil), digest: EVP_sha256())
        return try LocalSendIdentity(key: key, certificate: certificate)
    }

    /// Reads a PEM file's contents: one RSA private key (2048 bits or more) and its certificate, in any order.
    public convenience init(pem: [UInt8]) throws(SecurityError) {
        let (key, certificate) = try SelfSignedCertificate.parse(
            pem: pem, missing: "no unencrypted private key and certificate in it",
            wrongKey: "its key is not an RSA key of 2048 bits or more, which every LocalSend app accepts"
        ) { ferry_EVP_PKEY_is_rsa($0) == 1 && ferry_EVP_PKEY_bits($0) >= Self.keyBits }
        try self.init(key: key, certificate: certificate)
    }

    /// Takes ownership of both objects.
    private init(key: OpaquePointer, certificate: OpaquePointer) throws(SecurityError) {
        let der = try SelfSignedCertificate.der(of: certificate, key: key)
        privateKey = key
        self.certificate = certificate
        certificateDER = der
        fingerprint = LocalSendFingerprint(certificateDER: der)
    }

    deinit {
        EVP_PKEY_free(privateKey)
        X509_free(certificate)
    }

    /// The private key and the certificate as PEM text: the contents of `localsend-identity.pem`. A secret.
    public func pem() throws(SecurityError) -> [UInt8] {
        try SelfSignedCertificate.pem(key: privateKey, certificate: certificate)
    }

    /// Loads `localsend-identity.pem` from `directory`, creating it (and the directory, mode 0700) when missing,
    /// under the same rules as `identity.pem` (`DeviceIdentity.loadOrCreate`).
    public static func loadOrCreate(directory: String) throws(SecurityError) -> LocalSendIdentity {
        let path = directory + "/" + fileName
        if let identity = try load(path: path) { return identity }
        try KeyFile.create(try generate().pem(), directory: directory, fileName: fileName)
        guard let stored = try load(path: path) else { throw .identity("\(path) vanished while it was created") }
        return stored
    }

    /// The identity in `path`, nil when there is no such file.
    static func load(path: String) throws(SecurityError) -> LocalSendIdentity? {
        guard let bytes = try KeyFile.read(path: path, what: "LocalSend identity") else { return nil }
        do {
            return try LocalSendIdentity(pem: bytes)
        } catch {
            throw .identity(
                "\(path) is damaged (\(error)); remove it to create a new one (LocalSend peers will see"
                    + " this device as a new one)")
        }
    }
}
