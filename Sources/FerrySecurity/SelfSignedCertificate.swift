import COpenSSL

/// What `DeviceIdentity` (ferry's links) and `LocalSendIdentity` (LocalSend peers) share: a key with a self-signed
/// "CN=ferry" certificate made for it, both read from and written to one PEM file.
///
/// Each identity keeps its own rules: the key type it makes and accepts, the validity, the signature digest, and
/// what its messages say.
enum SelfSignedCertificate {
    /// When a new certificate is valid.
    enum Validity {
        /// From now for this many days.
        case fromNow(days: Int)
        /// Between two fixed ASN.1 times (`YYYYMMDDHHMMSSZ`).
        case fixed(from: String, until: String)
    }

    /// A new certificate for `key`: version 3, a random positive 128-bit serial whose first byte is never zero,
    /// `validity`, subject and issuer "CN=ferry", the public key, and the self-signature with `digest` (nil for a
    /// key that signs without a separate digest, Ed25519). On failure `key` is freed.
    static func make(for key: OpaquePointer, validity: Validity, digest: OpaquePointer?) throws(SecurityError)
        -> OpaquePointer
    {
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw .openSSL("could not allocate a certificate")
        }
        do {
            try fill(certificate, key: key, validity: validity, digest: digest)
        } catch {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
        return certificate
    }

    /// The private key and the certificate of `pem` (in any order), checked: both there (else `missing`), a key
    /// `acceptsKey` takes (else `wrongKey`), and a certificate that belongs to that key. The caller owns both.
    static func parse(
        pem: [UInt8], missing: String, wrongKey: String, acceptsKey: (OpaquePointer) -> Bool
    ) throws(SecurityError) -> (key: OpaquePointer, certificate: OpaquePointer) {
        func read(_ body: (OpaquePointer) -> OpaquePointer?) -> OpaquePointer? {
            pem.withUnsafeBytes { raw -> OpaquePointer? in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                return body(bio)
            }
        }
        let key = read { ferry_PEM_read_private_key($0) }
        let certificate = read { PEM_read_bio_X509($0, nil, nil, nil) }
        ERR_clear_error()
        guard let key, let certificate else {
            if let key { EVP_PKEY_free(key) }
            if let certificate { X509_free(certificate) }
            throw .identity(missing)
        }
        guard acceptsKey(key) else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .identity(wrongKey)
        }
        guard X509_check_private_key(certificate, key) == 1 else {
            ERR_clear_error()
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .identity("its certificate does not belong to its private key")
        }
        return (key, certificate)
    }

    /// The DER of `certificate`, what its hash is taken of; when it cannot be encoded, `certificate` and `key` are
    /// freed.
    static func der(of certificate: OpaquePointer, key: OpaquePointer) throws(SecurityError) -> [UInt8] {
        guard let der = DeviceIdentity.der(of: certificate) else {
            EVP_PKEY_free(key)
            X509_free(certificate)
            throw .openSSL("could not encode the certificate")
        }
        return der
    }

    /// The private key and the certificate as PEM text: a key file's contents. A secret.
    static func pem(key: OpaquePointer, certificate: OpaquePointer) throws(SecurityError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("could not allocate a memory BIO") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1,
            PEM_write_bio_X509(bio, certificate) == 1
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not write PEM"))
        }
        return DeviceIdentity.drain(bio)
    }

    private static func fill(
        _ certificate: OpaquePointer, key: OpaquePointer, validity: Validity, digest: OpaquePointer?
    ) throws(SecurityError) {
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw .openSSL("no random bytes for a serial") }
        serial[0] &= 0x7F  // a positive INTEGER
        serial[0] |= 0x01  // and never a short one with a leading zero byte
        let ok = serial.withUnsafeBufferPointer { buffer -> Bool in
            guard let number = BN_bin2bn(buffer.baseAddress, Int32(buffer.count), nil) else { return false }
            defer { BN_free(number) }
            return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
        }
        let dated: Bool
        switch validity {
        case .fromNow(let days):
            dated =
                X509_gmtime_adj(X509_getm_notBefore(certificate), 0) != nil
                && X509_time_adj_ex(X509_getm_notAfter(certificate), Int32(days), 0, nil) != nil
        case .fixed(let from, let until):
            dated =
                ferry_ASN1_TIME_set(X509_getm_notBefore(certificate), from) == 1
                && ferry_ASN1_TIME_set(X509_getm_notAfter(certificate), until) == 1
        }
        guard ok, X509_set_version(certificate, 2) == 1, dated,
            X509_set_pubkey(certificate, key) == 1,
            let name = X509_get_subject_name(certificate),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "ferry", -1, -1, 0) == 1,
            X509_set_issuer_name(certificate, name) == 1,
            X509_sign(certificate, key, digest) > 0
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not build the certificate"))
        }
    }
}
