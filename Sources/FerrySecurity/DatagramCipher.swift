import COpenSSL
import FerryWire
import Synchronization

/// AES-256-GCM for one direction of one link's datagrams, keyed from that link's TLS session.
///
/// The key and a 4-byte nonce salt come from the TLS exporter (RFC 8446 section 7.5) with a label naming the
/// direction, so both ends derive the same keys without sending any, a man in the middle derives others, and
/// each link (each TLS session) has fresh keys. The nonce is the salt followed by the 8-byte sequence number,
/// which the sender never repeats within a link; the datagram's header is the associated data.
public final class DatagramCipher: Sendable {
    /// Exporter label; the context names the direction.
    public static let exporterLabel = "EXPORTER-ferry-datagram-key"
    static let keyLength = 32
    static let saltLength = 4

    private let key: [UInt8]
    private let salt: [UInt8]
    private let context: Mutex<CipherContext>

    /// A cipher from 36 bytes of keying material: 32 of key, 4 of nonce salt.
    init?(keyingMaterial: [UInt8]) {
        guard keyingMaterial.count == Self.keyLength + Self.saltLength, let context = CipherContext() else {
            return nil
        }
        key = Array(keyingMaterial.prefix(Self.keyLength))
        salt = Array(keyingMaterial.suffix(Self.saltLength))
        self.context = Mutex(context)
    }

    /// The sending and receiving ciphers of a link, from its TLS session; nil before the handshake.
    public static func pair(for stream: TLSStream, isInitiator: Bool) -> (send: DatagramCipher, receive: DatagramCipher)? {
        let length = keyLength + saltLength
        guard let fromInitiator = stream.exportKeyingMaterial(
                label: exporterLabel, context: Array("initiator to acceptor".utf8), length: length),
            let fromAcceptor = stream.exportKeyingMaterial(
                label: exporterLabel, context: Array("acceptor to initiator".utf8), length: length),
            let initiatorCipher = DatagramCipher(keyingMaterial: fromInitiator),
            let acceptorCipher = DatagramCipher(keyingMaterial: fromAcceptor)
        else { return nil }
        return isInitiator ? (initiatorCipher, acceptorCipher) : (acceptorCipher, initiatorCipher)
    }

    /// Ciphertext and tag of `plaintext`, bound to `header`.
    public func seal(_ plaintext: [UInt8], header: [UInt8], sequence: UInt64) -> [UInt8]? {
        let nonce = self.nonce(sequence)
        return context.withLock { $0.seal(plaintext, header: header, key: key, nonce: nonce) }
    }

    /// The plaintext, or nil when the sealed bytes or the header were changed, or were sealed with another key.
    public func open(_ sealed: ArraySlice<UInt8>, header: ArraySlice<UInt8>, sequence: UInt64) -> [UInt8]? {
        guard sealed.count >= Datagram.tagLength else { return nil }
        let nonce = self.nonce(sequence)
        return context.withLock { $0.open(sealed, header: header, key: key, nonce: nonce) }
    }

    private func nonce(_ sequence: UInt64) -> [UInt8] {
        salt + (0..<8).map { UInt8(truncatingIfNeeded: sequence >> (56 - 8 * UInt64($0))) }
    }
}

/// One reusable `EVP_CIPHER_CTX`; noncopyable so it is freed once. `@unchecked Sendable`: a C pointer used only
/// inside `DatagramCipher`'s `Mutex`.
private struct CipherContext: ~Copyable, @unchecked Sendable {
    let context: OpaquePointer

    init?() {
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        self.context = context
    }

    deinit {
        EVP_CIPHER_CTX_free(context)
    }

    func seal(_ plaintext: [UInt8], header: [UInt8], key: [UInt8], nonce: [UInt8]) -> [UInt8]? {
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            ferry_EVP_CIPHER_CTX_set_ivlen(context, Int32(nonce.count)) == 1,
            EVP_EncryptInit_ex(context, nil, nil, key, nonce) == 1
        else { return nil }
        var length: Int32 = 0
        guard header.withUnsafeBufferPointer({ buffer in
            EVP_EncryptUpdate(context, nil, &length, buffer.baseAddress, Int32(buffer.count)) == 1
        }) else { return nil }
        var output = [UInt8](repeating: 0, count: plaintext.count + Datagram.tagLength)
        var total: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out -> Bool in
            guard plaintext.withUnsafeBufferPointer({ input in
                plaintext.isEmpty
                    || EVP_EncryptUpdate(context, out.baseAddress, &length, input.baseAddress, Int32(input.count)) == 1
            }) else { return false }
            total = plaintext.isEmpty ? 0 : length
            guard EVP_EncryptFinal_ex(context, out.baseAddress! + Int(total), &length) == 1 else { return false }
            total += length
            return ferry_EVP_CIPHER_CTX_get_tag(
                context, out.baseAddress! + Int(total), Int32(Datagram.tagLength)) == 1
        }
        ERR_clear_error()
        guard ok, Int(total) == plaintext.count else { return nil }
        return output
    }

    func open(_ sealed: ArraySlice<UInt8>, header: ArraySlice<UInt8>, key: [UInt8], nonce: [UInt8]) -> [UInt8]? {
        let ciphertextLength = sealed.count - Datagram.tagLength
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
            ferry_EVP_CIPHER_CTX_set_ivlen(context, Int32(nonce.count)) == 1,
            EVP_DecryptInit_ex(context, nil, nil, key, nonce) == 1
        else { return nil }
        var length: Int32 = 0
        guard header.withUnsafeBufferPointer({ buffer in
            EVP_DecryptUpdate(context, nil, &length, buffer.baseAddress, Int32(buffer.count)) == 1
        }) else { return nil }
        var plaintext = [UInt8](repeating: 0, count: max(ciphertextLength, 1))
        let ok = sealed.withUnsafeBufferPointer { input -> Bool in
            plaintext.withUnsafeMutableBufferPointer { out -> Bool in
                var total: Int32 = 0
                if ciphertextLength > 0 {
                    guard EVP_DecryptUpdate(
                        context, out.baseAddress, &length, input.baseAddress, Int32(ciphertextLength)) == 1
                    else { return false }
                    total = length
                }
                guard ferry_EVP_CIPHER_CTX_set_tag(
                    context, input.baseAddress! + ciphertextLength, Int32(Datagram.tagLength)) == 1
                else { return false }
                guard EVP_DecryptFinal_ex(context, out.baseAddress! + Int(total), &length) == 1 else { return false }
                return Int(total + length) == ciphertextLength
            }
        }
        ERR_clear_error()
        return ok ? Array(plaintext.prefix(ciphertextLength)) : nil
    }
}
