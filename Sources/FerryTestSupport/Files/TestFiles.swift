import Foundation
import Glibc

/// Deterministic test files written into one directory: random bytes, English-like text, images,
/// and trees of many files.
///
/// Why: transfer tests and benchmarks need files of exact sizes whose content is the same on every
/// run (a failure is reproduced from its seed), that compress like real data (random: not at all;
/// text: about 3-5x) and that are quick to make even at gigabytes (generated in 1 MiB pieces).
/// Names are relative to `directory`; missing parent directories are created.
public struct TestFiles: Sendable {
    /// Where files are written.
    public let directory: URL

    /// Size of the buffer each generator fills and writes in turn.
    static let pieceSize = 1 << 20

    public init(directory: URL) {
        self.directory = directory
    }

    public init(in directory: TemporaryDirectory) {
        self.directory = directory.url
    }

    /// Writes `size` pseudo-random bytes (SplitMix64 from `seed`); incompressible. A file with the same
    /// seed and a larger size starts with the same bytes.
    @discardableResult
    public func random(_ name: String = "random.bin", size: Int, seed: UInt64 = 1) throws -> URL {
        var generator = SplitMix64(seed: seed)
        return try stream(name, size: size) { generator.fill($0) }
    }

    /// Writes `size` bytes of English-like text (lines of words, punctuation and numbers) from `seed`.
    @discardableResult
    public func text(_ name: String = "text.txt", size: Int, seed: UInt64 = 1) throws -> URL {
        var generator = TextGenerator(seed: seed)
        return try stream(name, size: size) { generator.fill($0) }
    }

    /// Writes a baseline JPEG of `width` x `height` pixels (see `TestImage.jpeg`).
    @discardableResult
    public func jpeg(_ name: String = "image.jpg", width: Int, height: Int) throws -> URL {
        try write(name, bytes: TestImage.jpeg(width: width, height: height))
    }

    /// Writes a greyscale PNG of `width` x `height` pixels with real CRCs (see `TestImage.png`).
    @discardableResult
    public func png(_ name: String = "image.png", width: Int, height: Int) throws -> URL {
        try write(name, bytes: TestImage.png(width: width, height: height))
    }

    /// Writes `bytes` to `name`, replacing any file there.
    @discardableResult
    public func write(_ name: String, bytes: [UInt8]) throws -> URL {
        var offset = 0
        return try stream(name, size: bytes.count) { buffer in
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + buffer.count)]))
            }
            offset += buffer.count
        }
    }

    /// `count` pseudo-random bytes, the same as the file `random(size: count, seed: seed)`.
    public static func randomBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            generator.fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// `count` bytes of text, the same as the file `text(size: count, seed: seed)`.
    public static func textBytes(count: Int, seed: UInt64 = 1) -> [UInt8] {
        var generator = TextGenerator(seed: seed)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            generator.fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// The URL of `name` inside `directory`, after creating its parent directories.
    func prepare(_ name: String) throws -> URL {
        precondition(
            !name.isEmpty && !name.hasPrefix("/") && !name.split(separator: "/").contains(".."),
            "test file names are relative and stay inside the directory: \(name)")
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return url
    }

    /// Creates `name` and writes `size` bytes that `fill` produces, one piece of at most 1 MiB at a time.
    func stream(_ name: String, size: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) throws -> URL {
        precondition(size >= 0, "a file size is never negative")
        let url = try prepare(name)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestSupportError.systemCall("open(\(url.path))", errno: errno) }
        defer { Descriptor.close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(size, Self.pieceSize), alignment: 16)
        defer { buffer.deallocate() }
        var written = 0
        while written < size {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, size - written)])
            fill(piece)
            guard Descriptor.writeAll(fd, UnsafeRawBufferPointer(piece), socket: false) else {
                throw TestSupportError.systemCall("write(\(url.path))", errno: errno)
            }
            written += piece.count
        }
        return url
    }
}
