import FerryTestSupport
import Testing

@testable import FerryWire

@Suite("Identifiers")
struct IdentifierTests {
    @Test func peerIDHex() {
        #expect(Samples.peerID.description == "0123456789abcdef")
        #expect(PeerID(rawValue: 1).description == "0000000000000001")
        #expect(PeerID(hex: "0123456789ABCDEF") == Samples.peerID)
        #expect(PeerID(hex: "ff") == PeerID(rawValue: 255))
        #expect(PeerID(hex: "") == nil)
        #expect(PeerID(hex: "0123456789abcdef0") == nil)
        #expect(PeerID(hex: "xyz") == nil)
        #expect(PeerID(hex: "+1") == nil)
        #expect(PeerID(rawValue: 1) < PeerID(rawValue: 2))
    }

    @Test func base32Vectors() {
        // RFC 4648 section 10, without padding.
        let vectors = [
            "": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB",
            "foobar": "MZXW6YTBOI",
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(Array(encoded.utf8), byteCount: plain.utf8.count) == Array(plain.utf8))
        }
        #expect(Base32.decode(Array("MZ".utf8), byteCount: 1) == nil)  // non-zero padding bits
        #expect(Base32.decode(Array("M1".utf8), byteCount: 1) == nil)
    }

    @Test func deviceIDForms() throws {
        let id = Samples.deviceID
        #expect(id.hex == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        #expect(id.base32 == "AAAQEAYEAUDAOCAJBIFQYDIOB4IBCEQTCQKRMFYYDENBWHA5DYPQ")
        #expect(id.description == "AAAQ-EAYE-AUDA-OCAJ-BIFQ-YDIO-B4IB-CEQT-CQKR-MFYY-DENB-WHA5-DYPQ")
        #expect(id.shortDescription == "AAAQ-EAYE")
        #expect(DeviceID(string: id.hex) == id)
        #expect(DeviceID(string: id.hex.uppercased()) == id)
        #expect(DeviceID(string: id.description) == id)
        #expect(DeviceID(string: id.description.lowercased()) == id)
        #expect(DeviceID(string: id.base32) == id)
        #expect(DeviceID(string: "") == nil)
        #expect(DeviceID(string: String(id.hex.dropLast())) == nil)
        #expect(DeviceID(string: String(id.base32.dropLast()) + "R") == nil)  // non-zero padding bit
        #expect(DeviceID(string: String(id.base32.dropLast()) + "1") == nil)
        #expect(DeviceID(bytes: Array(0...30)) == nil)
        #expect(DeviceID(bytes: Array(0...32)) == nil)
    }

    @Test func deviceIDRoundTripsThroughBothForms() throws {
        var generator = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let id = try #require(DeviceID(bytes: generator.bytes(count: DeviceID.length)))
            #expect(DeviceID(string: id.description) == id)
            #expect(DeviceID(string: id.hex) == id)
            #expect(id.description.count == 64)
            #expect(id.hasPrefix(id.shortDescription))
        }
    }

    @Test func deviceIDPrefixMatching() {
        let id = Samples.deviceID
        #expect(id.hasPrefix("AAAQ-EAYE"))
        #expect(id.hasPrefix("aaaqeay"))
        #expect(id.hasPrefix("aaaq-"))
        #expect(id.hasPrefix("000102"))
        #expect(id.hasPrefix("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"))
        #expect(!id.hasPrefix(""))
        #expect(!id.hasPrefix("-"))
        #expect(!id.hasPrefix("AAAR"))
        #expect(!id.hasPrefix("0002"))
        #expect(!id.hasPrefix(id.description + "A"))
    }
}
