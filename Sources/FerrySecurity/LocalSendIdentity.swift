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
        return try LocalSendIdentity(key: key, certificate: certificate)
    }

    /// Reads a PEM file's contents: one RSA private key (2048 bits or more) and its certificate, in any order.
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
            throw .identity("no unencrypted private key and certificate in it")
        }
        guard ferry_EVP_PKEY_is_rsa(key) == 1, ferry_EVP_PKEY_bits(key) >= Self.keyBits else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .identity("its key is not an RSA key of 2048 bits or more, which every LocalSend app accepts")
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
        guard let der = DeviceIdentity.der(of: certificate) else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .openSSL("could not encode the certificate")
        }
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
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("could not allocate a memory BIO") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, privateKey, nil, nil, 0, nil, nil) == 1,
            PEM_write_bio_X509(bio, certificate) == 1
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not write PEM"))
        }
        return DeviceIdentity.drain(bio)
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

    /// Version 3, a random positive 128-bit serial, subject and issuer "CN=ferry", the fixed validity, the public
    /// key, and the self-signature (SHA-256 with RSA, which every LocalSend stack verifies).
    private static func fill(_ certificate: OpaquePointer, key: OpaquePointer) throws(SecurityError) {
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw .openSSL("no random bytes for a serial") }
        serial[0] &= 0x7F  // a positive INTEGER
        serial[0] |= 0x01  // and never a short one with a leading zero byte
        let ok = serial.withUnsafeBufferPointer { buffer -> Bool in
            guard let number = BN_bin2bn(buffer.baseAddress, Int32(buffer.count), nil) else { return false }
            defer { BN_free(number) }
            return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
        }
        guard ok, X509_set_version(certificate, 2) == 1,
            ferry_ASN1_TIME_set(X509_getm_notBefore(certificate), validFrom) == 1,
            ferry_ASN1_TIME_set(X509_getm_notAfter(certificate), validUntil) == 1,
            X509_set_pubkey(certificate, key) == 1,
            let name = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "ferry", -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, name) == 1,
            X509_sign(certificate, key, EVP_sha256()) > 0
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not build the certificate"))
        }
    }
}
