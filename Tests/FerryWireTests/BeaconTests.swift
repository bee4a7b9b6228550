import Testing

@testable import FerryWire

@Suite("Beacon")
struct BeaconTests {
    @Test(arguments: ["beacon", "beacon-query"])
    func everyTruncatedBeaconIsMalformed(_ name: String) throws {
        let bytes = try Fixtures.bytes(name)
        for length in 0..<bytes.count {
            #expect {
                try Beacon(decoding: bytes[..<length])
            } throws: { error in
                guard case .malformed(let what) = error as? WireError else { return false }
                return what.hasPrefix("beacon: truncated at ")
            }
        }
    }

    /// PROTOCOL.md 6 and 4.1: `filesOnly` is beacon flag bit 3 (byte 5) and hello capability bit 4.
    @Test func filesOnlyIsBeaconFlagBit3AndCapabilityBit4() throws {
        var beacon = Samples.beacon
        beacon.flags = [.available, .filesOnly]
        let bytes = beacon.encoded()
        #expect(bytes[5] == 0x0A)
        #expect(try Beacon(decoding: bytes[...]).flags.contains(.filesOnly))
        #expect(Capabilities.filesOnly.rawValue == 1 << 4)
        #expect(Capabilities.known.contains(.filesOnly))
        #expect(Capabilities([.zlib, .filesOnly]).description == "[zlib, filesOnly]")
    }

    @Test func extensionBytesAreIgnoredUpToTheLimit() throws {
        let bytes = try Fixtures.bytes("beacon")
        let padded = bytes + [UInt8](repeating: 0xEE, count: Limits.maxBeaconLength - bytes.count)
        #expect(try Beacon(decoding: padded[...]) == Samples.beacon)
        #expect(throws: WireError.payloadTooLarge(length: 513, limit: 512)) {
            try Beacon(decoding: (padded + [0])[...])
        }
    }

    @Test func badMagicVersionAndMode() throws {
        let bytes = try Fixtures.bytes("beacon")
        #expect(throws: WireError.badMagic) {
            try Beacon(decoding: ([0x46, 0x52, 0x59, 0x43] + bytes.dropFirst(4))[...])
        }
        #expect(throws: WireError.badMagic) { try Beacon(decoding: Array("FD".utf8)[...]) }
        var future = bytes
        future[4] = 2
        #expect(throws: WireError.unsupportedVersion(major: 2, minor: 0)) { try Beacon(decoding: future[...]) }
        var badMode = bytes
        badMode[6] = 0
        #expect(throws: WireError.invalidField("mode: unknown value 0")) { try Beacon(decoding: badMode[...]) }
    }

    @Test func unknownFlagsPreservedReservedIgnored() throws {
        var bytes = try Fixtures.bytes("beacon")
        bytes[5] = 0xF2
        bytes[7] = 0x77
        let beacon = try Beacon(decoding: bytes[...])
        #expect(beacon.flags.rawValue == 0xF2)
        #expect(beacon.flags.contains(.available))
        #expect(!beacon.flags.contains(.leaving))
    }

    @Test func stringsAreValidated() throws {
        var beacon = Samples.beacon
        beacon.sessionID = String(repeating: "s", count: 65)
        #expect(throws: WireError.invalidField("sessionID: 65 bytes, more than the limit of 64")) {
            try beacon.validate()
        }
        beacon.sessionID = "s"
        beacon.displayName = ""
        #expect(throws: WireError.invalidField("displayName: empty")) { try beacon.validate() }

        let bytes = try Fixtures.bytes("beacon")
        var invalid = bytes
        invalid[bytes.count - 11] = 0xC0  // inside "Zoë's laptop": 0xC0 is never valid UTF-8
        #expect(throws: WireError.invalidField("displayName: invalid UTF-8")) { try Beacon(decoding: invalid[...]) }
    }

    @Test func largestValidBeaconFitsTheLimit() throws {
        let beacon = Beacon(
            flags: [.available, .leaving], mode: .server, peerID: PeerID(rawValue: .max), deviceID: Samples.deviceID,
            tcpPort: .max, sessionID: String(repeating: "é", count: 32),
            displayName: String(repeating: "n", count: 64))
        let bytes = beacon.encoded()
        #expect(bytes.count <= Limits.maxBeaconLength)
        #expect(try Beacon(decoding: bytes[...]) == beacon)
    }

    @Test func discoveryConstants() {
        #expect(Discovery.multicastGroup == "239.255.70.89")
        #expect(Discovery.port == 41970)
        #expect(Discovery.defaultTCPPort == 41971)
    }
}
