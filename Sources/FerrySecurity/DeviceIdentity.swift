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
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL("could not allocate a certificate")
        }
        do {
            try Self.fill(certificate, key: key)
        } catch {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
        return try DeviceIdentity(key: key, certificate: certificate)
    }

    /// Reads a PEM file's contents: one private key and one certificate, in any order.
    public convenience init(pem: [UInt8]) throws(SecurityError) {
        let key = pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return ferry_PEM_read_private_key(bio)
        }
        let certificate = pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        ERR_clear_error()
        guard let key, let certificate else {
            if let key { EVP_PKEY_free(key) }
            if let certificate { X509_free(certificate) }
            if String(decoding: pem, as: UTF8.self).contains("ENCRYPTED") {
                throw .identity("its private key is encrypted; ferry keeps its key unencrypted, mode 0600")
            }
            throw .identity("no private key and certificate in it")
        }
        guard ferry_EVP_PKEY_is_ed25519(key) == 1 else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .identity("its key is not an Ed25519 key, the only kind ferry's links accept")
        }
        guard X509_check_private_key(certificate, key) == 1 else {
            ERR_clear_error()
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .identity("its certificate does not belong to its private key")
        }
        try self.init(key: key, certificate: certificate)
    }

    /// Takes ownership of both objects.
    private init(key: OpaquePointer, certificate: OpaquePointer) throws(SecurityError) {
        guard let der = Self.der(of: certificate) else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .openSSL("could not encode the certificate")
        }
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
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("could not allocate a memory BIO") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, privateKey, nil, nil, 0, nil, nil) == 1,
            PEM_write_bio_X509(bio, certificate) == 1
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not write PEM"))
        }
        return Self.drain(bio)
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

    /// Serial number, validity, subject "CN=ferry" and the self-signature.
    ///
    /// The validity runs from now to 100 years on, and nobody checks it: a peer is identified by the certificate's
    /// hash, not by dates (so a wrong system clock never breaks a link).
    private static func fill(_ certificate: OpaquePointer, key: OpaquePointer) throws(SecurityError) {
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw .openSSL("no random bytes for a serial") }
        serial[0] &= 0x7F  // a positive INTEGER
        let ok = serial.withUnsafeBufferPointer { buffer -> Bool in
            guard let number = BN_bin2bn(buffer.baseAddress, Int32(buffer.count), nil) else { return false }
            defer { BN_free(number) }
            return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
        }
        guard ok, X509_set_version(certificate, 2) == 1,
            X509_gmtime_adj(X509_getm_notBefore(certificate), 0) != nil,
            X509_time_adj_ex(X509_getm_notAfter(certificate), 36_500, 0, nil) != nil,
            X509_set_pubkey(certificate, key) == 1,
            let name = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "ferry", -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, name) == 1,
            X509_sign(certificate, key, nil) > 0
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not build the certificate"))
        }
    }
}
