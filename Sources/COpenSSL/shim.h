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
