import FerryTestSupport
import Testing

@testable import FerryWire

@Suite("Codec checksums")
struct CodecChecksumTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { Hex.string(UInt64($0), width: 2) }.joined()
    }

    @Test func crc32Vectors() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)  // the CRC-32 check value
        #expect(CRC32.checksum([UInt8]()) == 0)
        #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        let bytes = Array("123456789".utf8)
        #expect(bytes.withUnsafeBytes { CRC32.checksum($0) } == 0xCBF4_3926)
        #expect(CRC32.checksum(bytes[2...]) == CRC32.checksum(Array(bytes[2...])))
        #expect(CRC32.checksum(bytes.lazy.map { $0 }) == 0xCBF4_3926)  // A non-contiguous sequence.
    }

    @Test func crc32InPiecesEqualsWhole() {
        var generator = SplitMix64(seed: 11)
        let bytes = generator.bytes(count: 10_000)
        for _ in 0..<50 {
            let cut = Int.random(in: 0...bytes.count, using: &generator)
            var crc = bytes[..<cut].withUnsafeBytes { CRC32.update(0, $0) }
            crc = CRC32.update(crc, bytes[cut...])
            #expect(crc == CRC32.checksum(bytes))
        }
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
