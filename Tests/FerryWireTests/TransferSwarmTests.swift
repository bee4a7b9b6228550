import Testing

@testable import FerryWire

/// The swarm's wire format (PROTOCOL.md 11.11): the optional parts of older layouts and the limits of the new frames.
@Suite("Transfer swarm frames")
struct TransferSwarmTests {
    static let id = TransferSamples.transferID.bytes
    static let swarmID = TransferSamples.swarmID.bytes

    /// An older peer's offer or reply (without the new part) decodes as before; every other strict prefix of the
    /// new layout is malformed.
    @Test(arguments: TransferSamples.optionalPartCases.map(\.golden.name))
    func theOptionalPartIsAbsentInTheOldLayoutAndOtherwiseWhole(_ name: String) throws {
        let (golden, oldLength, withoutPart) = try #require(
            TransferSamples.optionalPartCases.first { $0.golden.name == name })
        let payload = try golden.payload()
        for length in 0..<payload.count {
            let frame = Frame(kind: golden.message.kind, payload: Array(payload[..<length]))
            if length == oldLength {
                #expect(try TransferMessage(frame: frame) == withoutPart)
                continue
            }
            let error = #expect(throws: WireError.self, "prefix of \(length) bytes") {
                try TransferMessage(frame: frame)
            }
            guard case .malformed = error else {
                Issue.record("prefix of \(length) bytes: \(String(describing: error))")
                continue
            }
        }
        // A newer peer's bytes after the part are ignored.
        let longer = Frame(kind: golden.message.kind, payload: payload + [0xDE, 0xAD])
        #expect(try TransferMessage(frame: longer) == golden.message)
        // Without the part, nothing is written for it: the older layout byte for byte.
        #expect(withoutPart.frame.payload == Array(payload[..<oldLength]))
    }

    /// Offer bytes up to the end of the entries, from the golden offer.
    static func offerHead() throws -> [UInt8] {
        Array(try TransferSamples.frameCases[0].payload())
    }

    static func member(_ byte: UInt8, _ address: [UInt8]) -> [UInt8] {
        Array(repeating: byte, count: 32) + [UInt8(address.count)] + address
    }

    @Test func memberCountZeroMeansNoSwarm() throws {
        let head = try Self.offerHead()
        #expect(
            try TransferMessage(frame: Frame(kind: .offer, payload: head + [0, 0])) == .offer(TransferSamples.offer))
        #expect(
            try TransferMessage(frame: Frame(kind: .offer, payload: head + [0, 0, 0xFF]))
                == .offer(TransferSamples.offer))
    }

    @Test func swarmSectionLimits() throws {
        let head = try Self.offerHead()
        func decode(_ section: [UInt8]) throws(WireError) -> TransferMessage {
            try TransferMessage(frame: Frame(kind: .offer, payload: head + section))
        }
        // One member is no swarm; 257 is over the limit: both refused before any member is read.
        #expect(throws: WireError.invalidField("memberCount: 1, not 0 or 2...256")) {
            try decode([0, 1] + Self.swarmID + Self.member(1, []))
        }
        #expect(throws: WireError.invalidField("memberCount: 257, not 0 or 2...256")) { try decode([1, 1]) }
        // 256 members announced, 2 sent: truncated, and nothing was reserved for the missing ones.
        #expect(throws: WireError.malformed("offer: truncated at deviceID")) {
            try decode([1, 0] + Self.swarmID + Self.member(1, []) + Self.member(2, []))
        }
        #expect(
            throws: WireError.invalidField(
                "members: device ID \(DeviceID(bytes: Array(repeating: 1, count: 32))!) listed twice")
        ) {
            try decode([0, 2] + Self.swarmID + Self.member(1, []) + Self.member(1, Array("a:1".utf8)))
        }
        #expect(throws: WireError.invalidField("address: not printable ASCII")) {
            try decode([0, 2] + Self.swarmID + Self.member(1, Array("a b:1".utf8)) + Self.member(2, []))
        }
        #expect(throws: WireError.invalidField("address: 65 bytes, more than the limit of 64")) {
            try decode([0, 2] + Self.swarmID + Self.member(1, Array(repeating: 0x31, count: 65)) + Self.member(2, []))
        }
        var offer = TransferSamples.offerWithSwarm
        offer.swarm?.members.removeLast(2)
        #expect(throws: WireError.invalidField("memberCount: 1, not 0 or 2...256")) { try offer.validate() }
        var twice = TransferSamples.swarm
        twice.members[1].deviceID = twice.members[0].deviceID
        offer.swarm = twice
        #expect(throws: WireError.self) { try offer.validate() }
        #expect(TransferSamples.swarm.index(of: TransferSamples.swarm.members[2].deviceID) == 2)
    }

    @Test func relayFlagOtherBitsArePreserved() throws {
        let head = Array(try TransferSamples.frameCases[1].payload())
        let decoded = try TransferMessage(frame: Frame(kind: .offerReply, payload: head + [0xFE]))
        guard case .offerReply(let reply) = decoded else { throw WireError.malformed("not a reply") }
        #expect(!reply.relay && reply.flags == 0xFE)
        #expect(decoded.frame.payload == head + [0xFE])
        var relay = TransferSamples.offerReply
        relay.relay = true
        #expect(relay == TransferSamples.offerReplyWithRelay)
        relay.relay = false
        #expect(relay == TransferSamples.offerReply)
    }

    @Test func swarmMembersLimits() throws {
        func decode(_ rest: [UInt8]) throws(WireError) -> TransferMessage {
            try TransferMessage(frame: Frame(kind: .swarmMembers, payload: Self.id + rest))
        }
        #expect(throws: WireError.invalidField("members: 2 after 2, not increasing")) {
            try decode([0, 2, 0, 2, 0, 2])
        }
        #expect(throws: WireError.invalidField("members: 1 after 2, not increasing")) {
            try decode([0, 2, 0, 2, 0, 1])
        }
        #expect(throws: WireError.invalidField("count: 257, not in 0...256")) { try decode([1, 1]) }
        #expect(throws: WireError.malformed("swarmMembers: truncated at member")) { try decode([1, 0, 0, 1]) }
        #expect(
            try decode([0, 0])
                == .swarmMembers(SwarmMembers(transferID: TransferSamples.transferID, members: [])))
        let tooMany = SwarmMembers(transferID: TransferSamples.transferID, members: Array(0...256))
        #expect(throws: WireError.invalidField("count: 257, not in 0...256")) { try tooMany.validate() }
    }

    @Test func chunkDigestsLimits() {
        func decode(_ rest: [UInt8]) throws(WireError) -> TransferMessage {
            try TransferMessage(frame: Frame(kind: .chunkDigests, payload: Self.id + rest))
        }
        let file: [UInt8] = [0, 0, 0, 0]
        #expect(throws: WireError.invalidField("count: 0, not in 1...1024")) { try decode(file + [0, 0, 0, 0, 0, 0]) }
        #expect(throws: WireError.invalidField("count: 1025, not in 1...1024")) {
            try decode(file + [0, 0, 0, 0, 0x04, 0x01])
        }
        // Chunks 2^32 - 1 and 2^32: the second does not exist.
        #expect(throws: WireError.invalidField("chunks 4294967295 + 2: past chunk 4294967295")) {
            try decode(file + [0xFF, 0xFF, 0xFF, 0xFF, 0, 2])
        }
        #expect(throws: WireError.malformed("chunkDigests: truncated at sha256")) {
            try decode(file + [0, 0, 0, 0, 0x04, 0x00, 0, 1] + Array(repeating: 7, count: 31))
        }
        var digests = TransferSamples.chunkDigests
        digests.entries[1].sha256.removeLast()
        #expect(throws: WireError.invalidField("sha256: 31 bytes, not 32")) { try digests.validate() }
    }

    @Test func swarmHaveLimits() {
        func decode(_ rest: [UInt8]) throws(WireError) -> TransferMessage {
            try TransferMessage(frame: Frame(kind: .swarmHave, payload: Self.swarmID + [0, 0, 0, 0] + rest))
        }
        #expect(throws: WireError.invalidField("count: 0, not in 1...1024")) { try decode([0, 0]) }
        #expect(throws: WireError.invalidField("count: 1025, not in 1...1024")) { try decode([0x04, 0x01]) }
        #expect(throws: WireError.invalidField("range 5..<5: empty or past chunk 4294967295")) {
            try decode([0, 1, 0, 0, 0, 5, 0, 0, 0, 0])
        }
        #expect(throws: WireError.invalidField("range 4294967295..<4294967297: empty or past chunk 4294967295")) {
            try decode([0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 2])
        }
        #expect(throws: WireError.malformed("swarmHave: truncated at length")) {
            try decode([0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 0])
        }
        let last = SwarmHave(swarmID: TransferSamples.swarmID, fileIndex: 0, ranges: [4_294_967_295..<4_294_967_296])
        #expect(throws: Never.self) { try last.validate() }
    }

    @Test func openSetsAreCarried() throws {
        let refuse = try TransferMessage(
            frame: Frame(kind: .swarmRefuse, payload: Self.swarmID + [0, 0, 0, 1, 0, 0, 0, 2, 0x99]))
        #expect(
            refuse
                == .swarmRefuse(
                    SwarmRefuse(
                        swarmID: TransferSamples.swarmID, fileIndex: 1, chunkIndex: 2,
                        reason: SwarmRefuseReason(rawValue: 0x99))))
        #expect(SwarmRefuseReason(rawValue: 0x99).description == "unknown reason (153)")
        #expect(SwarmReportReason.badChunk.description == "sent a chunk that did not match the sender's digest")
        #expect(ChunkStatus.storedFromPeer.description == "stored from a peer")
        #expect(SwarmID(TransferSamples.swarmID.transferID) == TransferSamples.swarmID)
    }
}
