import COpenSSL
import Synchronization

/// Incremental SHA-256 over a whole file, from OpenSSL's EVP digest interface.
///
/// Files are verified by SHA-256 before they are published; the hash is fed chunk by chunk as the file is read or
/// received. A `final class` rather than a `~Copyable` struct so that the transfer engine can keep it in a record
/// and hand it from task to task; the OpenSSL context sits behind a `Mutex`, which makes the class `Sendable`
/// without `@unchecked` (a hasher is used by one task at a time, so the lock is never contended and costs a few
/// nanoseconds per chunk). The context is freed when the hasher is.
public final class SHA256Hasher: Sendable {
    /// Length of a digest in bytes.
    public static let digestLength = 32

    private let context: Mutex<DigestContext>

    /// A hasher over no bytes yet.
    public init() {
        context = Mutex(DigestContext())
    }

    /// Feeds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        context.withLock { $0.update(bytes) }
    }

    /// Feeds `bytes` (an array, an array slice or any other sequence of bytes).
    public func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if done == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// The 32-byte digest of everything fed so far. The hasher then starts over, empty, so it can be reused.
    public func finalize() -> [UInt8] {
        context.withLock { $0.finalize() }
    }

    /// The SHA-256 digest of `bytes` in one call (`EVP_Digest`: no hasher, no lock, no context kept).
    public static func digest(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var length: UInt32 = 0
        let digest = [UInt8](unsafeUninitializedCapacity: digestLength) { buffer, count in
            precondition(
                EVP_Digest(bytes.baseAddress, bytes.count, buffer.baseAddress, &length, sha256.pointer, nil) == 1,
                "EVP_Digest(SHA-256) failed")
            count = digestLength
        }
        precondition(length == UInt32(digestLength), "SHA-256 digest of unexpected length \(length)")
        return digest
    }

    /// The SHA-256 digest of `bytes` (an array, an array slice or any other sequence of bytes) in one call.
    public static func digest(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        let done = bytes.withContiguousStorageIfAvailable { digest(UnsafeRawBufferPointer($0)) }
        return done ?? Array(bytes).withUnsafeBytes { digest($0) }
    }

    /// SHA-256 fetched from OpenSSL's default provider once, for every context and one-shot digest.
    ///
    /// Why: `EVP_sha256()` is a legacy descriptor, and OpenSSL 3 fetches the provider's implementation again
    /// (a property query and a lookup in a locked method store) at every `EVP_DigestInit_ex` given it, and a
    /// finalized hasher was initialized once more to be reusable: two fetches per chunk digest, 3-4% of the user
    /// time of either end with 1000 files of 4-64 KiB. A fetched descriptor is initialized without a lookup.
    static let sha256 = FetchedDigest()
}

/// An `EVP_MD` fetched once and kept for the process (never freed: a global).
final class FetchedDigest: @unchecked Sendable {
    let pointer: OpaquePointer

    init() {
        // Only fails without the default provider (a broken OpenSSL installation): nothing a caller could handle.
        guard let pointer = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("EVP_MD_fetch(SHA256) failed") }
        self.pointer = pointer
    }
}

/// Owns one `EVP_MD_CTX` set up for SHA-256; noncopyable so the context is freed exactly once.
///
/// `@unchecked Sendable` because it holds a C pointer: it is only ever used inside `SHA256Hasher`'s `Mutex`, and
/// without the conformance the compiler cannot tell that `update` does not keep the caller's buffer.
private struct DigestContext: ~Copyable, @unchecked Sendable {
    private let pointer: OpaquePointer

    init() {
        // Allocation and SHA-256 setup only fail when the process is out of memory: nothing a caller could handle.
        guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        self.pointer = pointer
        reset()
    }

    deinit {
        EVP_MD_CTX_free(pointer)
    }

    func reset() {
        precondition(
            EVP_DigestInit_ex(pointer, SHA256Hasher.sha256.pointer, nil) == 1, "EVP_DigestInit_ex(SHA-256) failed")
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(EVP_DigestUpdate(pointer, base, bytes.count) == 1, "EVP_DigestUpdate failed")
    }

    func finalize() -> [UInt8] {
        var length: UInt32 = 0
        let digest = [UInt8](unsafeUninitializedCapacity: SHA256Hasher.digestLength) { buffer, count in
            precondition(EVP_DigestFinal_ex(pointer, buffer.baseAddress, &length) == 1, "EVP_DigestFinal_ex failed")
            count = SHA256Hasher.digestLength
        }
        precondition(length == UInt32(SHA256Hasher.digestLength), "SHA-256 digest of unexpected length \(length)")
        reset()
        return digest
    }
}
