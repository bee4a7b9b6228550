import COpenSSL

/// OpenSSL's `SSL_CTX` for the HTTPS server LocalSend peers connect to: TLS 1.2 and 1.3, our RSA certificate
/// (`LocalSendIdentity`), a client certificate requested and accepted whatever its issuer or dates.
///
/// Apart from `TLSContext` (ferry's links stay TLS 1.3 with Ed25519 only): every LocalSend stack speaks TLS 1.2
/// and 1.3, and apps up to 1.15 cannot verify an Ed25519 signature (docs/LOCALSEND.md, "Certificates and TLS").
/// TLS 1.2 is limited to ECDHE key exchange with AEAD ciphers (forward secrecy, no CBC). ALPN answers "http/1.1"
/// when the client offers it (LocalSend 1.18 offers "h2" first; ferry speaks HTTP/1.1 only). No session tickets or
/// cache, no renegotiation, no TLS compression; the client's certificate list is capped as on links.
///
/// `@unchecked Sendable`: an `SSL_CTX` is safe to share between threads once configured; it is never changed
/// after `init`.
public final class HTTPSContext: @unchecked Sendable {
    /// What the server does about the client's certificate.
    public enum ClientCertificatePolicy: Sendable {
        /// Asks for one and serves a client that sends none (it then has no identity: `HTTPSStream.Peer`'s
        /// `certificateDER` is nil).
        case request
        /// Asks for one and fails the handshake of a client that sends none.
        case require
    }

    /// TLS 1.2 suites: ECDHE with AES-GCM or ChaCha20-Poly1305, as rustls and BoringSSL offer them.
    public static let tls12CipherList = "ECDHE+AESGCM:ECDHE+CHACHA20"

    /// The key and certificate presented to every client.
    public let identity: LocalSendIdentity
    /// What happens to a client without a certificate.
    public let clientCertificatePolicy: ClientCertificatePolicy
    let context: OpaquePointer

    /// A server context presenting `identity`. Throws when OpenSSL refuses the setup.
    public init(identity: LocalSendIdentity, clientCertificate: ClientCertificatePolicy = .request)
        throws(SecurityError)
    {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not create a TLS context"))
        }
        self.identity = identity
        self.clientCertificatePolicy = clientCertificate
        self.context = context
        guard ferry_SSL_CTX_set_tls12_and_tls13(context) == 1,
            SSL_CTX_use_certificate(context, identity.certificate) == 1,
            SSL_CTX_use_PrivateKey(context, identity.privateKey) == 1,
            SSL_CTX_check_private_key(context) == 1,
            SSL_CTX_set_num_tickets(context, 0) == 1,
            ferry_SSL_CTX_set_cipher_list(context, Self.tls12CipherList) == 1
        else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not configure the HTTPS context"))
        }
        ferry_SSL_CTX_request_peer_certificate(context, clientCertificate == .require ? 1 : 0)
        ferry_SSL_CTX_select_http11(context)
        _ = ferry_SSL_CTX_set_session_cache_off(context)
        _ = ferry_SSL_CTX_set_max_cert_list(context, TLSContext.maxCertificateListBytes)
        ferry_SSL_CTX_set_default_options(context)
    }

    deinit {
        SSL_CTX_free(context)
    }
}
