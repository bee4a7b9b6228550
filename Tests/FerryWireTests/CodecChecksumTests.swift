import FerryTestSupport
import Testing

@testable import FerryWire

@Suite("Codec checksums")
struct CodecChecksumTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { Hex.string(UInt64($0), width: 2) }.joined()
    }

    /// 200 000 bytes `(i * 31 + 7) & 0xff`: three chunks of 64 KiB and one of 3392 bytes at the smallest chunk size,
    /// one chunk at 1 MiB.
    static let pattern: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// File digests (PROTOCOL.md 11.7) computed by Python's hashlib, independently of this implementation:
    /// `sha256(b"".join(sha256(data[s:s + c]).digest() for s in range(0, len(data), c)))`.
    @Test func fileDigestVectors() {
        #expect(
            Self.hex(FileDigest.of(Self.pattern, chunkSize: 65_536))
                == "1d5f68e3669c888b9a89fe8271ba8274d6b0e00840652d70b6f79f174b5d0ff0")
        #expect(
            Self.hex(FileDigest.of(Self.pattern, chunkSize: 1_048_576))
                == "4749d196a617e7e58a509350b2fc3f002a516f8bbd4d4aec46380f0ec3426b31")
        #expect(
            Self.hex(FileDigest.of(Array(Self.pattern.prefix(131_072)), chunkSize: 65_536))
                == "7dfe9ac602f1c1455694ec2008d8b8a9193001efd41e2cf90ef1198b6e88a7f3")
        // An empty file has no chunks: the SHA-256 of the empty string.
        #expect(
            Self.hex(FileDigest.of([], chunkSize: 65_536))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Not the SHA-256 of the bytes ("8f9d1bf4..."): the digest over the chunk digests.
        #expect(FileDigest.of(Self.pattern, chunkSize: 1_048_576) != SHA256Hasher.digest(Self.pattern))
        // One chunk: the SHA-256 of its SHA-256 (the fileEnd golden frame's "hello\n").
        #expect(FileDigest.of(Array("hello\n".utf8), chunkSize: 65_536) == TransferSamples.helloFileDigest)
        #expect(FileDigest.chunkDigest(Array("hello\n".utf8)) == TransferSamples.helloChunkDigest)
        #expect(FileDigest.chunkDigest(TransferSamples.chunkRaw) == TransferSamples.chunkDigest)
    }

    /// Added chunk by chunk, from their digests or their bytes, the digest is the one of the whole; and it starts
    /// over after `finalize`.
    @Test func fileDigestFedChunkByChunkEqualsWhole() {
        let whole = FileDigest.of(Self.pattern, chunkSize: 65_536)
        let digest = FileDigest()
        for (index, start) in stride(from: 0, to: Self.pattern.count, by: 65_536).enumerated() {
            let chunk = Self.pattern[start..<min(start + 65_536, Self.pattern.count)]
            if index % 2 == 0 {
                digest.add(chunkDigest: FileDigest.chunkDigest(chunk))
            } else {
                chunk.withUnsafeBytes { _ = digest.add(chunk: $0) }
            }
        }
        #expect(digest.finalize() == whole)
        #expect(digest.finalize() == FileDigest.of([], chunkSize: 65_536))
    }

    @Test func sha256Vectors() {
        #expect(
            Self.hex(SHA256Hasher.digest([UInt8]()))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Self.hex(SHA256Hasher.digest(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Self.hex(SHA256Hasher.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(
            Self.hex(million.withUnsafeBytes { SHA256Hasher.digest($0) })
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha256InRandomPiecesEqualsWhole() {
        var generator = SplitMix64(seed: 12)
        let bytes = generator.bytes(count: 20_000)
        let whole = SHA256Hasher.digest(bytes)
        for _ in 0..<20 {
            let hasher = SHA256Hasher()
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + Int.random(in: 0...3000, using: &generator))
                if Bool.random(using: &generator) {
                    hasher.update(bytes[offset..<end])
                } else {
                    bytes[offset..<end].withUnsafeBytes { hasher.update($0) }
                }
                offset = end
            }
            #expect(hasher.finalize() == whole)
        }
    }

    @Test func finalizeStartsOver() {
        let hasher = SHA256Hasher()
        hasher.update(Array("abc".utf8))
        #expect(hasher.finalize() == SHA256Hasher.digest(Array("abc".utf8)))
        #expect(hasher.finalize() == SHA256Hasher.digest([UInt8]()))
        hasher.update(Array("ab".utf8))
        hasher.update(Array("c".utf8))
        #expect(hasher.finalize() == SHA256Hasher.digest(Array("abc".utf8)))
    }

    @Test func hasherMovesBetweenTasks() async {
        let hasher = SHA256Hasher()
        hasher.update(Array("a".utf8))
        let moved = await Task.detached {
            hasher.update(Array("bc".utf8))
            return hasher
        }.value
        #expect(moved.finalize() == SHA256Hasher.digest(Array("abc".utf8)))
    }
}
