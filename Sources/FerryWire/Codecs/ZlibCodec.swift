import CZlib

/// Raw deflate and bounded inflate with zlib: the `.zlib` half of `ChunkCompressor` and `ChunkInflater`.
///
/// Raw deflate (window bits -15) because the chunk already carries its own length and SHA-256, so zlib's header
/// and Adler-32 would only repeat them. The `z_stream` lives in allocated memory, not in a Swift variable, because
/// zlib keeps a pointer back to it between calls. Lengths beyond `uInt` (4 GiB) are fed in pieces.
enum ZlibCodec {
    private static let streamSize = Int32(MemoryLayout<z_stream>.size)
    private static let maximumPiece = Int(uInt.max)

    /// Deflates `raw` into `output`; returns the compressed length, or nil when it does not fit in `output`.
    static func deflate(_ raw: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, level: Int) -> Int? {
        guard let outBase = output.baseAddress, !output.isEmpty else { return nil }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        let clamped = Int32(min(max(level, 0), 9))
        guard deflateInit2_(stream, clamped, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, zlibVersion(), streamSize) == Z_OK
        else { return nil }
        defer { deflateEnd(stream) }

        var inputLeft = raw.count
        var outputLeft = output.count
        stream.pointee.next_in = UnsafeMutablePointer(mutating: raw.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.next_out = outBase.assumingMemoryBound(to: Bytef.self)
        while true {
            if stream.pointee.avail_in == 0, inputLeft > 0 {
                let piece = min(inputLeft, maximumPiece)
                stream.pointee.avail_in = uInt(piece)
                inputLeft -= piece
            }
            if stream.pointee.avail_out == 0 {
                guard outputLeft > 0 else { return nil }  // Out of room: the result would not be smaller.
                let piece = min(outputLeft, maximumPiece)
                stream.pointee.avail_out = uInt(piece)
                outputLeft -= piece
            }
            let flush = inputLeft == 0 ? Z_FINISH : Z_NO_FLUSH
            switch CZlib.deflate(stream, flush) {
            case Z_STREAM_END:
                return output.count - outputLeft - Int(stream.pointee.avail_out)
            case Z_OK, Z_BUF_ERROR:
                continue
            default:
                return nil
            }
        }
    }

    /// Inflates raw deflate `data` into exactly `output.count` bytes, or throws.
    ///
    /// Writes only into `output`; once it is full, a one-byte probe tells a stream that ends there from a bomb that
    /// has more to give.
    static func inflate(_ data: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer)
        throws(CompressionError)
    {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let probe = UnsafeMutablePointer<Bytef>.allocate(capacity: 1)
        defer {
            stream.deinitialize(count: 1)
            stream.deallocate()
            probe.deallocate()
        }
        guard inflateInit2_(stream, -15, zlibVersion(), streamSize) == Z_OK else {
            throw .corrupt("zlib: inflateInit2 failed")
        }
        defer { inflateEnd(stream) }

        var inputLeft = data.count
        var outputLeft = output.count
        var probing = false
        stream.pointee.next_in = UnsafeMutablePointer(mutating: data.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        while true {
            if stream.pointee.avail_in == 0, inputLeft > 0 {
                let piece = min(inputLeft, maximumPiece)
                stream.pointee.avail_in = uInt(piece)
                inputLeft -= piece
            }
            if stream.pointee.avail_out == 0, !probing {
                if outputLeft > 0 {
                    let piece = min(outputLeft, maximumPiece)
                    stream.pointee.avail_out = uInt(piece)
                    outputLeft -= piece
                } else {
                    probing = true
                    stream.pointee.next_out = probe
                    stream.pointee.avail_out = 1
                }
            }
            let result = CZlib.inflate(stream, Z_NO_FLUSH)
            if probing, stream.pointee.avail_out == 0 {
                throw .corrupt("zlib: inflates past \(output.count) bytes")
            }
            switch result {
            case Z_STREAM_END:
                guard probing || (outputLeft == 0 && stream.pointee.avail_out == 0) else {
                    let written = output.count - outputLeft - Int(stream.pointee.avail_out)
                    throw .corrupt("zlib: inflates to \(written) of \(output.count) bytes")
                }
                guard inputLeft == 0, stream.pointee.avail_in == 0 else {
                    let trailing = inputLeft + Int(stream.pointee.avail_in)
                    throw .corrupt("zlib: \(trailing) bytes after the end of the stream")
                }
                return
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                // No progress was possible although output room was given: the input ran out.
                throw .corrupt("zlib: truncated")
            default:
                throw .corrupt("zlib: \(message(stream) ?? "error \(result)")")
            }
        }
    }

    private static func message(_ stream: UnsafeMutablePointer<z_stream>) -> String? {
        stream.pointee.msg.map { String(cString: $0) }
    }
}
