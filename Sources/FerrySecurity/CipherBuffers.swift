import COpenSSL

/// The ciphertext between one `SSL` object and its transport, held in Swift arrays that OpenSSL reads and writes
/// through a BIO of ours (`CipherBuffers.method`), instead of two memory BIOs.
///
/// Why: a memory BIO copies every byte once more on each side. Records that OpenSSL writes went into the BIO's
/// buffer and were copied out again into the array handed to the socket; here they are appended to `output`, which
/// `takeOutput()` hands over without a copy. Ciphertext from the peer was copied into the BIO's buffer before
/// OpenSSL copied it into its record buffer; here OpenSSL reads it straight out of the arrays `feed` was given.
///
/// Lives inside `TLSEngine` (under `TLSStream`'s lock); the BIOs hold it unretained, and the engine frees the `SSL`
/// (and with it the BIOs) before it.
final class CipherBuffers {
    /// Ciphertext from the peer not yet read by OpenSSL: `input[0][inputOffset...]`, then the later arrays.
    private var input: [[UInt8]] = []
    private var inputOffset = 0
    private(set) var inputCount = 0
    /// Records written by OpenSSL, not yet taken.
    private(set) var output: [UInt8] = []

    /// Ciphertext received from the peer; kept (not copied) until OpenSSL has read it.
    func feed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        input.append(bytes)
        inputCount += bytes.count
    }

    /// Makes room for `count` more bytes of records, so that writing them does not grow `output` piecemeal.
    func reserveOutput(_ count: Int) {
        output.reserveCapacity(output.count + count)
    }

    /// The records written so far; `output` starts again empty.
    func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    fileprivate func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        var copied = 0
        while copied < count, let first = input.first {
            let take = min(count - copied, first.count - inputOffset)
            first.withUnsafeBytes { bytes in
                (destination + copied).copyMemory(from: bytes.baseAddress! + inputOffset, byteCount: take)
            }
            copied += take
            inputOffset += take
            if inputOffset == first.count {
                input.removeFirst()
                inputOffset = 0
            }
        }
        inputCount -= copied
        return copied
    }

    fileprivate func write(_ source: UnsafeRawPointer, count: Int) {
        output.append(contentsOf: UnsafeRawBufferPointer(start: source, count: count))
    }

    /// A BIO of `method` that reads and writes `self`. The caller owns it (hands it to `SSL_set_bio`).
    func makeBIO() -> OpaquePointer? {
        guard let method = Self.method, let bio = BIO_new(method) else { return nil }
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
        return bio
    }

    private static func buffers(of bio: OpaquePointer?) -> CipherBuffers? {
        guard let bio, let data = BIO_get_data(bio) else { return nil }
        return Unmanaged<CipherBuffers>.fromOpaque(data).takeUnretainedValue()
    }

    /// The BIO method, created once: reads come out of `input` (an empty input says "retry", as a memory BIO whose
    /// end-of-file return is -1 does, never end of file), writes are appended to `output`, a flush succeeds.
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ferry ciphertext") else {
            return nil
        }
        _ = BIO_meth_set_write_ex(method) { bio, data, count, written in
            guard let buffers = CipherBuffers.buffers(of: bio), let data else { return 0 }
            buffers.write(data, count: count)
            written?.pointee = count
            return 1
        }
        _ = BIO_meth_set_read_ex(method) { bio, destination, count, read in
            let retryFlags = Int32(BIO_FLAGS_READ | BIO_FLAGS_WRITE | BIO_FLAGS_IO_SPECIAL | BIO_FLAGS_SHOULD_RETRY)
            BIO_clear_flags(bio, retryFlags)
            guard let buffers = CipherBuffers.buffers(of: bio), let destination else { return 0 }
            let copied = buffers.read(into: destination, count: count)
            read?.pointee = copied
            if copied == 0 {
                BIO_set_flags(bio, Int32(BIO_FLAGS_READ | BIO_FLAGS_SHOULD_RETRY))
                return 0
            }
            return 1
        }
        _ = BIO_meth_set_ctrl(method) { bio, command, _, _ in
            switch command {
            case BIO_CTRL_FLUSH: return 1
            case BIO_CTRL_PENDING: return CipherBuffers.buffers(of: bio).map { Int($0.inputCount) } ?? 0
            case BIO_CTRL_WPENDING: return CipherBuffers.buffers(of: bio).map { Int($0.output.count) } ?? 0
            default: return 0
            }
        }
        return method
    }()
}
