import Testing

@testable import FerryWire

@Suite("Preface")
struct PrefaceTests {
    @Test func everyStrictPrefixNeedsMore() throws {
        let bytes = try Fixtures.bytes("preface")
        for length in 0..<Preface.length {
            #expect(try Preface.decode(bytes[..<length]) == nil)
        }
    }

    @Test func decodesFromASliceWithNonZeroStart() throws {
        let bytes = [0xEE, 0xEE] + (try Fixtures.bytes("preface"))
        #expect(try Preface.decode(bytes[2...]) == .current)
    }

    @Test func badMagicIsRejectedAtTheFirstWrongByte() {
        #expect(throws: WireError.badMagic) { try Preface.decode(Array("GET / HTTP/1.1\r\n".utf8)[...]) }
        #expect(throws: WireError.badMagic) { try Preface.decode([0x46, 0x45, 0x52, 0x00][...]) }
        #expect(throws: WireError.badMagic) { try Preface.decode(Array("FERRYX\u{1}\u{0}".utf8)[...]) }
    }

    @Test func otherMajorVersionIsUnsupported() {
        #expect(throws: WireError.unsupportedVersion(major: 2, minor: 0)) {
            try Preface.decode(Preface.encode(ProtocolVersion(major: 2, minor: 0))[...])
        }
        #expect(throws: WireError.unsupportedVersion(major: 0, minor: 9)) {
            try Preface.decode(Preface.encode(ProtocolVersion(major: 0, minor: 9))[...])
        }
    }

    @Test func higherMinorVersionIsCompatible() throws {
        let newer = ProtocolVersion(major: 1, minor: 5)
        #expect(try Preface.decode(Preface.encode(newer)[...]) == newer)
        #expect(newer > .current)
        #expect(newer.isCompatibleWithCurrent)
        #expect(newer.description == "1.5")
    }

    @Test func trailingBytesDoNotMatter() throws {
        // The transport reads 8 bytes at most, but a decoder handed more still reads only the first 8.
        let bytes = Preface.encode() + [0x00, 0x01]
        #expect(try Preface.decode(bytes[...]) == .current)
    }
}
