import COpenSSL

/// OpenSSL's `SSL_CTX` for this install's links: TLS 1.3 only, both sides present certificates, no CA.
///
/// One context serves both roles (initiators are TLS clients, acceptors TLS servers). Certificate checks are left
/// to the session: OpenSSL accepts any certificate whose key the peer proves to hold, and the session compares its
/// SHA-256 with the device ID the peer announced and the trust store. No session tickets or resumption: every link
/// is a full handshake, so the pairing code and exported keys always come from a fresh exchange.
///
/// `@unchecked Sendable`: an `SSL_CTX` is safe to share between threads once configured; it is never changed
/// after `init`.
public final class TLSContext: @unchecked Sendable {
    /// The largest certificate list a peer may send during the handshake (ours is about 400 bytes).
    public static let maxCertificateListBytes = 16 << 10

    /// TLS 1.3 suites in order of preference: AES-128-GCM first (the fastest with AES-NI, as strong as needed),
    /// then the others OpenSSL offers by default.
    static let cipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    /// The one key exchange group (PROTOCOL 3.1): every TLS 1.3 stack has it, and one group means the client's
    /// single key share is always the right one (no HelloRetryRequest round trip).
    static let groups = "X25519"
    /// The one signature algorithm, for both sides' CertificateVerify: ferry identities are Ed25519 keys.
    static let signatureAlgorithms = "ed25519"

    /// The key and certificate this context presents on every link.
    public let identity: DeviceIdentity
    let context: OpaquePointer

    /// A TLS 1.3-only context presenting `identity`, asking the peer for its certificate (mutual TLS,
    /// accepted whatever its issuer: the device ID is what is checked). Throws when OpenSSL refuses the setup.
    public init(identity: DeviceIdentity) throws(SecurityError) {
        guard let context = SSL_CTX_new(TLS_method()) else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not create a TLS context"))
        }
        self.identity = identity
        self.context = context
        guard ferry_SSL_CTX_set_tls13_only(context) == 1,
            SSL_CTX_use_certificate(context, identity.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, identity.privateKey) == 1,
            SSL_CTX_check_private_key(context) == 1,
            SSL_CTX_set_num_tickets(context, 0) == 1,
            SSL_CTX_set_ciphersuites(context, Self.cipherSuites) == 1,
            ferry_SSL_CTX_set_groups(context, Self.groups) == 1,
            ferry_SSL_CTX_set_signature_algorithms(context, Self.signatureAlgorithms) == 1
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not configure the TLS context"))
        }
        ferry_SSL_CTX_require_peer_certificate(context)
        _ = ferry_SSL_CTX_set_session_cache_off(context)
        _ = ferry_SSL_CTX_set_max_cert_list(context, Self.maxCertificateListBytes)
        // Plain records, never TLS compression (CRIME) or renegotiation (absent from TLS 1.3 anyway).
        ferry_SSL_CTX_set_default_options(context)
    }

    deinit {
        SSL_CTX_free(context)
    }
}
