import Foundation

extension TestFiles {
    /// Writes a photo-like JPEG of exactly `size` bytes: the header of `TestImage.jpeg` naming `width` x `height`,
    /// pseudo-random bytes from `seed` where the entropy-coded scan would be, and EOI.
    ///
    /// Why: broadcast benchmarks send camera images, which are large and do not compress; real photos would need an
    /// encoder or fixtures. Sniffers read the header (media type and dimensions) as from a real photo; a decoder would
    /// reject the scan, which nothing here decodes.
    @discardableResult
    public func photo(
        _ name: String = "photo.jpg", size: Int, seed: UInt64 = 1, width: Int = 4000, height: Int = 3000
    ) throws -> URL {
        let header = TestImage.jpegHeader(width: width, height: height)
        let trailer: [UInt8] = [0xFF, 0xD9]
        precondition(size >= header.count + trailer.count, "a photo has room for its header and EOI")
        var generator = SplitMix64(seed: seed)
        var offset = 0
        return try stream(name, size: size) { piece in
            generator.fill(piece)
            let end = offset + piece.count
            for position in stride(from: offset, to: min(end, header.count), by: 1) {
                piece[position - offset] = header[position]
            }
            for position in stride(from: max(offset, size - trailer.count), to: end, by: 1) {
                piece[position - offset] = trailer[position - (size - trailer.count)]
            }
            offset += piece.count
        }
    }
}
