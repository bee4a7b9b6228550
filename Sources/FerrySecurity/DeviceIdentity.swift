import COpenSSL
import FerryWire
import Foundation

/// This install's identity: an Ed25519 key and a self-signed certificate; the device ID is the SHA-256 of the
/// certificate (DER).
///
/// ferry has no certificate authority: peers know each other by device ID, which TLS binds to the key (the peer
/// proves it holds the private key of the certificate it presents). The key and certificate live together in one
/// PEM file, `identity.pem`, mode 0600, so creating it is a single atomic step.
///
/// `@unchecked Sendable`: it holds two OpenSSL objects (`EVP_PKEY`, `X509`) that are never changed after `init`;
/// OpenSSL allows concurrent read-only use of both (they are reference counted and only read by `SSL_CTX_use_*`).
public final class DeviceIdentity: @unchecked Sendable {
    /// Name of the file in the configuration directory.
    public static let fileName = "identity.pem"

    /// The SHA-256 of `certificateDER`: what peers know this install by and pin.
    public let deviceID: DeviceID
    /// The certificate, DER-encoded: what peers hash into the device ID.
    public let certificateDER: [UInt8]
    let privateKey: OpaquePointer
    let certificate: OpaquePointer

    /// A new key and self-signed certificate, in memory only.
    public static func generate() throws(SecurityError) -> DeviceIdentity {
        guard let key = ferry_generate_ed25519() else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not generate an Ed25519 key"))
        }
        // Nobody checks the dates: a peer is identified by the certificate's hash, not by them (so a wrong system
        // clock never breaks a link). Ed25519 signs without a separate digest.
        let certificate = try SelfSignedCertificate.make(for: key, validity: .fromNow(days: 36_500), digest: nil)
        return try DeviceIdentity(key: key, certificate: certificate)
    }

    /// Reads a PEM file's contents: one private key and one certificate, in any order.
    public convenience init(pem: [UInt8]) throws(SecurityError) {
        let encrypted = String(decoding: pem, as: UTF8.self).contains("ENCRYPTED")
        let (key, certificate) = try SelfSignedCertificate.parse(
            pem: pem,
            missing: encrypted
                ? "its private key is encrypted; ferry keeps its key unencrypted, mode 0600"
                : "no private key and certificate in it",
            wrongKey: "its key is not an Ed25519 key, the only kind ferry's links accept"
        ) { ferry_EVP_PKEY_is_ed25519($0) == 1 }
        try self.init(key: key, certificate: certificate)
    }

    /// Takes ownership of both objects.
    private init(key: OpaquePointer, certificate: OpaquePointer) throws(SecurityError) {
        let der = try SelfSignedCertificate.der(of: certificate, key: key)
        self.privateKey = key
        self.certificate = certificate
        self.certificateDER = der
        guard let id = DeviceID(bytes: SHA256Hasher.digest(der)) else { preconditionFailure("SHA-256 is 32 bytes") }
        self.deviceID = id
    }

    deinit {
        EVP_PKEY_free(privateKey)
        X509_free(certificate)
    }

    /// The private key and the certificate as PEM text: the contents of `identity.pem`. A secret.
    public func pem() throws(SecurityError) -> [UInt8] {
        try SelfSignedCertificate.pem(key: privateKey, certificate: certificate)
    }

    /// The device ID of a certificate given in DER: its SHA-256.
    public static func deviceID(ofCertificate der: [UInt8]) -> DeviceID {
        guard let id = DeviceID(bytes: SHA256Hasher.digest(der)) else { preconditionFailure("SHA-256 is 32 bytes") }
        return id
    }

    static func der(of certificate: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509(certificate, &cursor)
        }
        return written == length ? bytes : nil
    }

    static func drain(_ bio: OpaquePointer) -> [UInt8] {
        let pending = Int(ferry_BIO_pending(bio))
        guard pending > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: pending) { buffer, count in
            let read = BIO_read(bio, buffer.baseAddress, Int32(pending))
            count = max(Int(read), 0)
        }
    }
}
