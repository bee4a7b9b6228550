#include <string.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/objects.h>

// Function forms of OpenSSL macros and variadic calls, which Swift cannot import.

static inline int ferry_SSL_CTX_set_tls13_only(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1) return 0;
    return SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1;
}

static inline long ferry_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long ferry_SSL_CTX_set_session_cache_off(SSL_CTX *ctx) {
    return SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

static inline int ferry_accept_any_certificate(int preverify_ok, X509_STORE_CTX *store) {
    (void)preverify_ok;
    (void)store;
    // ferry has no CA: a peer is identified by the SHA-256 of the certificate it presents (its device ID), which
    // the session checks against discovery and the trust store after the handshake. TLS still proves that the
    // peer holds the certificate's private key (CertificateVerify).
    return 1;
}

static inline void ferry_SSL_CTX_require_peer_certificate(SSL_CTX *ctx) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT | SSL_VERIFY_CLIENT_ONCE,
                       ferry_accept_any_certificate);
}

static inline EVP_PKEY *ferry_generate_ed25519(void) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
}

static inline size_t ferry_BIO_pending(BIO *bio) {
    return BIO_ctrl_pending(bio);
}

static inline int ferry_EVP_CIPHER_CTX_set_ivlen(EVP_CIPHER_CTX *ctx, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, length, NULL);
}

static inline int ferry_EVP_CIPHER_CTX_get_tag(EVP_CIPHER_CTX *ctx, unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, length, tag);
}

static inline int ferry_EVP_CIPHER_CTX_set_tag(EVP_CIPHER_CTX *ctx, const unsigned char *tag, int length) {
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, length, (void *)tag);
}

static inline long ferry_SSL_CTX_set_max_cert_list(SSL_CTX *ctx, long bytes) {
    return SSL_CTX_set_max_cert_list(ctx, bytes);
}

static inline int ferry_SSL_CTX_set_groups(SSL_CTX *ctx, const char *list) {
    return SSL_CTX_set1_groups_list(ctx, list) == 1;
}

static inline int ferry_SSL_CTX_set_signature_algorithms(SSL_CTX *ctx, const char *list) {
    // The same list for what this side signs with and what it accepts from the peer, as server and as client.
    return SSL_CTX_set1_sigalgs_list(ctx, list) == 1 && SSL_CTX_set1_client_sigalgs_list(ctx, list) == 1;
}

/// The short name of the key exchange group the handshake used ("X25519"), or "" before it.
static inline const char *ferry_SSL_negotiated_group_name(SSL *ssl) {
    int nid = (int)SSL_get_negotiated_group(ssl);
    const char *name = nid > 0 ? OBJ_nid2sn(nid) : NULL;
    return name ? name : "";
}

/// The short name of the signature algorithm the peer signed its CertificateVerify with ("ED25519"), or "".
static inline const char *ferry_SSL_peer_signature_name(SSL *ssl) {
    int nid = 0;
    if (SSL_get_peer_signature_type_nid(ssl, &nid) != 1 || nid <= 0) return "";
    const char *name = OBJ_nid2sn(nid);
    return name ? name : "";
}

static inline int ferry_EVP_PKEY_is_ed25519(const EVP_PKEY *key) {
    return EVP_PKEY_get_id(key) == EVP_PKEY_ED25519;
}

static inline void ferry_SSL_CTX_set_default_options(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
}

static inline int ferry_no_passphrase(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer;
    (void)size;
    (void)rwflag;
    (void)userdata;
    // ferry's identity file is never encrypted: never let OpenSSL ask for a passphrase on the terminal.
    return -1;
}

static inline EVP_PKEY *ferry_PEM_read_private_key(BIO *bio) {
    return PEM_read_bio_PrivateKey(bio, NULL, ferry_no_passphrase, NULL);
}

// LocalSend peers (docs/LOCALSEND.md, "Certificates and TLS"): an RSA certificate, HTTPS with TLS 1.2 and 1.3, a
// client certificate requested, the server's certificate pinned by its SHA-256.

static inline EVP_PKEY *ferry_generate_rsa2048(void) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
}

static inline int ferry_EVP_PKEY_is_rsa(const EVP_PKEY *key) {
    return EVP_PKEY_get_id(key) == EVP_PKEY_RSA;
}

static inline int ferry_EVP_PKEY_bits(const EVP_PKEY *key) {
    return EVP_PKEY_get_bits(key);
}

static inline int ferry_SSL_CTX_set_tls12_and_tls13(SSL_CTX *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    return SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1;
}

/// Asks the client for a certificate, accepted whatever its issuer and dates (its SHA-256 is the identity);
/// `require` fails the handshake of a client that sends none.
static inline void ferry_SSL_CTX_request_peer_certificate(SSL_CTX *ctx, int require) {
    int mode = SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE;
    if (require) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, ferry_accept_any_certificate);
}

static inline int ferry_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                      const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl;
    (void)arg;
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char *selected = NULL;
    unsigned char length = 0;
    if (SSL_select_next_proto(&selected, &length, http11, sizeof http11, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_NOACK;  // no ALPN in the answer: the client falls back to HTTP/1.1 or gives up
    }
    *out = selected;
    *outlen = length;
    return SSL_TLSEXT_ERR_OK;
}

/// ALPN: "http/1.1" when the client offers it (LocalSend 1.18 offers "h2" first), no ALPN answer otherwise.
static inline void ferry_SSL_CTX_select_http11(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, ferry_select_http11, NULL);
}

/// The protocol ALPN chose ("http/1.1"), written into `buffer` (NUL-terminated); "" when none.
static inline void ferry_SSL_alpn_selected(const SSL *ssl, char *buffer, size_t capacity) {
    const unsigned char *data = NULL;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl, &data, &length);
    if (capacity == 0) return;
    if (length >= capacity) length = 0;
    if (length > 0) memcpy(buffer, data, length);
    buffer[length] = 0;
}

/// A server certificate pinned by the SHA-256 of its DER: what is expected, what the server presented.
typedef struct {
    unsigned char expected[32];
    unsigned char presented[32];
    int presentedKnown;
} ferry_certificate_pin;

static inline int ferry_verify_pinned_certificate(X509_STORE_CTX *store, void *arg) {
    ferry_certificate_pin *pin = (ferry_certificate_pin *)arg;
    X509 *leaf = X509_STORE_CTX_get0_cert(store);
    unsigned int length = 0;
    if (leaf == NULL || X509_digest(leaf, EVP_sha256(), pin->presented, &length) != 1 || length != 32) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_UNSPECIFIED);
        return 0;
    }
    pin->presentedKnown = 1;
    if (CRYPTO_memcmp(pin->presented, pin->expected, 32) != 0) {
        X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED);
        return 0;
    }
    return 1;
}

/// Replaces chain verification by the pin: with SSL_VERIFY_PEER a mismatch fails the handshake (an alert, before
/// the client's Finished), so not one application byte is written to the wrong server. No CA, no dates, no name:
/// LocalSend peers are known by the hash alone.
static inline void ferry_SSL_CTX_pin_peer_certificate(SSL_CTX *ctx, ferry_certificate_pin *pin) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ctx, ferry_verify_pinned_certificate, pin);
}

static inline int ferry_SSL_CTX_set_cipher_list(SSL_CTX *ctx, const char *list) {
    return SSL_CTX_set_cipher_list(ctx, list) == 1;
}

static inline int ferry_ASN1_TIME_set(ASN1_TIME *time, const char *text) {
    return ASN1_TIME_set_string_X509(time, text);
}
