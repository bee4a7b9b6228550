import COpenSSL

/// One OpenSSL `SSL` object whose BIOs read and write Swift arrays (`CipherBuffers`): ciphertext goes in through
/// `feed`, comes out through `drain`.
///
/// BIOs over memory keep OpenSSL away from the socket, so the reactor stays the only owner of descriptors and TLS
/// runs over any `ByteStream`. Noncopyable so the `SSL` is freed exactly once; `@unchecked Sendable` because it holds C
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
    /// The ciphertext both ways; read and written by OpenSSL through the two BIOs the `SSL` owns.
    private let buffers = CipherBuffers()

    init(context: TLSContext, isClient: Bool) throws(SecurityError) {
        try self.init(sslContext: context.context, isClient: isClient)
    }

    /// A connection of any configured `SSL_CTX` (ferry's links, or LocalSend's HTTPS in `HTTPSContext`).
    init(sslContext: OpaquePointer, isClient: Bool) throws(SecurityError) {
        guard let ssl = SSL_new(sslContext) else {
            throw .openSSL(SecurityError.drainOpenSSLErrors(fallback: "could not create a TLS connection"))
        }
        guard let input = buffers.makeBIO() else {
            SSL_free(ssl)
            throw .openSSL("could not allocate BIOs")
        }
        guard let output = buffers.makeBIO() else {
            BIO_free(input)
            SSL_free(ssl)
            throw .openSSL("could not allocate BIOs")
        }
        SSL_set_bio(ssl, input, output)  // the SSL owns both BIOs now
        if isClient { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)  // frees the BIOs, which refer to `buffers` unretained, before `buffers` goes
    }

    /// Ciphertext received from the peer (kept, not copied, until OpenSSL has read it).
    func feed(_ bytes: [UInt8]) {
        buffers.feed(bytes)
    }

    /// Ciphertext waiting to be sent to the peer.
    func drain() -> [UInt8] {
        buffers.takeOutput()
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
        let available = buffers.inputCount + Int(SSL_pending(ssl))
        guard available > 0 else { return ([], .needInput) }
        let capacity = min(maxBytes, available)
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = 0
            ERR_clear_error()  // once: a successful SSL_read_ex leaves the error queue as it found it
            while count < capacity {
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

    /// Plaintext written straight into `buffer` (up to its count): as much as the input already holds, or a step
    /// when none. OpenSSL decrypts each record in its own buffer and copies it out once, here.
    ///
    /// The thread's OpenSSL error queue is cleared once, not before each record: a successful `SSL_read_ex` adds
    /// nothing to it, so the queue is still clean when the last call fails and `SSL_get_error` reads it. Cleared per
    /// record (64 a MiB), the thread-local lookup of the queue was 1 % of a receiver's CPU.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> (count: Int, step: Step) {
        var count = 0
        ERR_clear_error()
        while count < buffer.count {
            var read = 0
            if SSL_read_ex(ssl, buffer.baseAddress! + count, buffer.count - count, &read) == 1 {
                count += read
                continue
            }
            return (count, step(forError: SSL_get_error(ssl, 0), fallback: "read error"))
        }
        return (count, .done)
    }

    /// Encrypts `pieces` (each into records of its own) and returns the records to send.
    func write(_ pieces: [ArraySlice<UInt8>]) throws(SecurityError) -> [UInt8] {
        let total = pieces.reduce(0) { $0 + $1.count }
        // TLS 1.3 adds 22 bytes to each record of 16 KiB at most (header 5, content type 1, tag 16).
        buffers.reserveOutput(total + (total / 16_384 + pieces.count) * 22)
        ERR_clear_error()  // once, as in `read(into:)`: the loop ends at the first failure
        for bytes in pieces where !bytes.isEmpty {
            var written = 0
            let ok = bytes.withUnsafeBytes { raw in SSL_write_ex(ssl, raw.baseAddress, raw.count, &written) }
            guard ok == 1, written == bytes.count else {
                throw .connectionFailed(SecurityError.drainOpenSSLErrors(fallback: "write error"))
            }
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

    /// The negotiated protocol version, e.g. "TLSv1.3".
    func protocolVersion() -> String {
        guard let name = SSL_get_version(ssl) else { return "" }
        return String(cString: name)
    }

    /// The protocol ALPN selected ("http/1.1"), or "" when none was.
    func selectedALPN() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        ferry_SSL_alpn_selected(ssl, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
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
