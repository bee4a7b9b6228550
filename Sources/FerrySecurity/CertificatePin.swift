import COpenSSL
import FerryWire

/// A server certificate expected by its SHA-256, checked by OpenSSL inside the handshake
/// (`ferry_verify_pinned_certificate`): a client that pins this way writes no application byte to a server that
/// presents another certificate.
///
/// Remembers what the server presented, for the error that names both fingerprints. `@unchecked Sendable`: the C
/// storage is written by OpenSSL during one handshake on one thread and read by that thread afterwards.
package final class CertificatePin: @unchecked Sendable {
    /// What the server's certificate must hash to.
    package let expected: LocalSendFingerprint
    let storage: UnsafeMutablePointer<ferry_certificate_pin>

    package init(expected: LocalSendFingerprint) {
        self.expected = expected
        storage = .allocate(capacity: 1)
        storage.initialize(to: ferry_certificate_pin())
        withUnsafeMutableBytes(of: &storage.pointee.expected) { raw in
            raw.copyBytes(from: expected.deviceID.bytes)
        }
    }

    deinit {
        storage.deallocate()
    }

    /// The fingerprint of the certificate the server presented; nil when the handshake never got that far.
    package var presented: LocalSendFingerprint? {
        guard storage.pointee.presentedKnown != 0 else { return nil }
        let bytes = withUnsafeBytes(of: storage.pointee.presented) { Array($0) }
        return DeviceID(bytes: bytes).map(LocalSendFingerprint.init(deviceID:))
    }
}

extension LocalSendIdentity {
    /// Sets up a client `SSL_CTX` (libcurl's, from its `CURLOPT_SSL_CTX_FUNCTION`): our certificate and key as the
    /// client certificate (LocalSend 1.18 servers require one), and the server's certificate accepted only when it
    /// hashes to `pin.expected`. The key stays in OpenSSL's objects, never in a PEM string handed around. False
    /// when OpenSSL refuses.
    package func configureClient(_ sslContext: OpaquePointer, pin: CertificatePin) -> Bool {
        guard SSL_CTX_use_certificate(sslContext, certificate) == 1,
            SSL_CTX_use_PrivateKey(sslContext, privateKey) == 1,
            SSL_CTX_check_private_key(sslContext) == 1
        else {
            ERR_clear_error()
            return false
        }
        ferry_SSL_CTX_pin_peer_certificate(sslContext, pin.storage)
        _ = ferry_SSL_CTX_set_session_cache_off(sslContext)
        _ = ferry_SSL_CTX_set_max_cert_list(sslContext, TLSContext.maxCertificateListBytes)
        ferry_SSL_CTX_set_default_options(sslContext)
        return true
    }
}
