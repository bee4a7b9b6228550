import Testing

@testable import FerryWire

@Suite("Datagram")
struct DatagramTests {
    @Test func sessionTagIsZlibCRC32() {
        #expect(Datagram.sessionTag(for: "123456789") == 0xCBF4_3926)  // the CRC-32 check value
        #expect(Datagram.sessionTag(for: "") == 0)
        #expect(Datagram.sessionTag(for: "ferry-demo") == 0x5e7f_3845)
    }

    @Test func sealedLimitOnEncode() throws {
        var datagram = Samples.datagram
        datagram.sealed = Array(repeating: 0x55, count: Datagram.maxSealedLength)
        let bytes = try datagram.encoded()
        #expect(bytes.count == Datagram.headerLength + Limits.maxDatagramPayload + Datagram.tagLength)
        #expect(try Datagram(decoding: bytes[...]) == datagram)
        datagram.sealed.append(0)
        #expect(throws: WireError.payloadTooLarge(length: 1217, limit: 1216)) { try datagram.encoded() }
        datagram.sealed = Array(repeating: 0, count: 15)
        #expect(throws: WireError.self) { try datagram.encoded() }
    }

    @Test func sealedLimitsOnDecode() throws {
        let bytes = try Fixtures.bytes("datagram")
        let header = Array(bytes[..<Datagram.headerLength])
        #expect(throws: WireError.payloadTooLarge(length: 1217, limit: 1216)) {
            try Datagram(decoding: (header + [UInt8](repeating: 0, count: 1217))[...])
        }
        #expect(throws: WireError.self) { try Datagram(decoding: (header + [UInt8](repeating: 0, count: 15))[...]) }
        #expect(try Datagram(decoding: (header + [UInt8](repeating: 0, count: 16))[...]).sealed.count == 16)
    }

    @Test func headerIsTheFirst24BytesOfTheFixture() throws {
        let bytes = try Fixtures.bytes("datagram")
        #expect(Samples.datagram.header == Array(bytes[..<Datagram.headerLength]))
        #expect(try Samples.datagram.encoded() == bytes)
    }

    @Test func everyTruncatedHeaderIsMalformed() throws {
        let bytes = try Fixtures.bytes("datagram")
        for length in 0..<Datagram.headerLength {  // (a whole header without a tag is malformed too)
            #expect {
                try Datagram(decoding: bytes[..<length])
            } throws: { error in
                guard case .malformed(let what) = error as? WireError else { return false }
                return what.hasPrefix("datagram: truncated at ")
            }
        }
    }

    @Test func badMagicAndVersion() throws {
        let bytes = try Fixtures.bytes("datagram")
        #expect(throws: WireError.badMagic) { try Datagram(decoding: ([0x46, 0x45] + bytes.dropFirst(2))[...]) }
        #expect(throws: WireError.badMagic) { try Datagram(decoding: [0x00][...]) }
        var future = bytes
        future[2] = 3
        #expect(throws: WireError.unsupportedVersion(major: 3, minor: 0)) { try Datagram(decoding: future[...]) }
    }

    @Test func unknownFlagsAreIgnored() throws {
        var bytes = try Fixtures.bytes("datagram")
        bytes[3] = 0xFF
        #expect(try Datagram(decoding: bytes[...]) == Samples.datagram)
    }

    @Test func decodesFromASliceWithNonZeroStart() throws {
        let bytes = [0x01, 0x02, 0x03] + (try Fixtures.bytes("datagram"))
        #expect(try Datagram(decoding: bytes[3...]) == Samples.datagram)
    }
}
