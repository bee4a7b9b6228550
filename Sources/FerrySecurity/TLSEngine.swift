import COpenSSL

/// One OpenSSL `SSL` object with two memory BIOs: ciphertext goes in through `feed`, comes out through `drain`.
///
/// Memory BIOs keep OpenSSL away from the socket, so the reactor stays the only owner of descriptors and TLS runs
/// over any `ByteStream`. Noncopyable so the `SSL` is freed exactly once; `@unchecked Sendable` because it holds C
/// pointers and lives only inside `TLSStream`'s `Mutex`.
struct TLSEngine: ~Copyable, @unchecked Sendable {
    /// What one step of the handshake or of reading needs next.
    enum Step {
        case done
        case needInput
        case closed
        case failed(String)
    }

    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    init(context: TLSContext, isClient: Bool) throws(SecurityError) {
        guard let ssl = SSL_new(context.context) else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not create a TLS connection"))
        }
        guard let input = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .openSSL("could not allocate memory BIOs")
        }
        guard let output = BIO_new(BIO_s_mem()) else {
            BIO_free(input)
            SSL_free(ssl)
            throw .openSSL("could not allocate memory BIOs")
        }
        // A read from an empty input BIO means "need more", not end of file.
        BIO_ctrl(input, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        BIO_ctrl(output, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, input, output)  // the SSL owns both BIOs now
        if isClient { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        self.ssl = ssl
        self.input = input
        self.output = output
    }

    deinit {
        SSL_free(ssl)
    }

    /// Ciphertext received from the peer.
    func feed(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                BIO_write(input, raw.baseAddress! + offset, Int32(min(raw.count - offset, Int(Int32.max))))
            }
            guard written > 0 else { return }  // a memory BIO only fails when out of memory
            offset += Int(written)
        }
    }

    /// Ciphertext waiting to be sent to the peer.
    func drain() -> [UInt8] {
        DeviceIdentity.drain(output)
    }

    /// Advances the handshake as far as the input allows.
    func handshake() -> Step {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .done }
        return step(forError: SSL_get_error(ssl, result), fallback: "handshake error")
    }

    /// Up to `maxBytes` of plaintext: as much as the input already holds (several records), or a step when none.
    func read(maxBytes: Int) -> (bytes: [UInt8], step: Step) {
        var step = Step.done
        // Plaintext is never longer than the ciphertext it comes from: no 256 KiB buffer for a 40-byte record.
        let available = Int(ferry_BIO_pending(input)) + Int(SSL_pending(ssl))
        guard available > 0 else { return ([], .needInput) }
        let capacity = min(maxBytes, available)
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = 0
            while count < capacity {
                ERR_clear_error()
                var read = 0
                if SSL_read_ex(ssl, buffer.baseAddress! + count, capacity - count, &read) == 1 {
                    count += read
                    continue
                }
                step = self.step(forError: SSL_get_error(ssl, 0), fallback: "read error")
                return
            }
        }
        return (bytes, step)
    }

    /// Encrypts all of `bytes` and returns the records to send.
    func write(_ bytes: ArraySlice<UInt8>) throws(SecurityError) -> [UInt8] {
        guard !bytes.isEmpty else { return drain() }
        ERR_clear_error()
        var written = 0
        let ok = bytes.withUnsafeBytes { raw in SSL_write_ex(ssl, raw.baseAddress, raw.count, &written) }
        guard ok == 1, written == bytes.count else {
            throw .connectionFailed(SecurityError.drainOpenSSLErrors(fallback: "write error"))
        }
        return drain()
    }

    /// A close_notify alert (our side sends no more), as records to send; reading stays possible.
    func closeNotify() -> [UInt8] {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        return drain()
    }

    /// The certificate the peer presented, DER-encoded.
    func peerCertificate() -> [UInt8]? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return DeviceIdentity.der(of: certificate)
    }

    /// RFC 8446 section 7.5 exporter: `length` bytes bound to this connection, `label` and `context`.
    func exportKeyingMaterial(label: String, context: [UInt8], length: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: length)
        let labelBytes = Array(label.utf8)
        let ok = labelBytes.withUnsafeBufferPointer { labelBuffer in
            context.withUnsafeBufferPointer { contextBuffer in
                SSL_export_keying_material(
                    ssl, &out, length, UnsafeRawPointer(labelBuffer.baseAddress!).assumingMemoryBound(to: CChar.self),
                    labelBuffer.count, contextBuffer.baseAddress, contextBuffer.count, 1)
            }
        }
        ERR_clear_error()
        return ok == 1 ? out : nil
    }

    /// The negotiated cipher suite, e.g. "TLS_AES_128_GCM_SHA256".
    func cipherName() -> String {
        guard let cipher = SSL_get_current_cipher(ssl), let name = SSL_CIPHER_get_name(cipher) else { return "" }
        return String(cString: name)
    }

    /// The key exchange group of the handshake, e.g. "X25519".
    func groupName() -> String {
        String(cString: ferry_SSL_negotiated_group_name(ssl))
    }

    /// The algorithm the peer signed the handshake with, e.g. "ED25519".
    func peerSignatureName() -> String {
        String(cString: ferry_SSL_peer_signature_name(ssl))
    }

    private func step(forError error: Int32, fallback: String) -> Step {
        switch error {
        case SSL_ERROR_WANT_READ:
            return .needInput
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            return .failed(SecurityError.drainOpenSSLErrors(fallback: fallback))
        }
    }
}
