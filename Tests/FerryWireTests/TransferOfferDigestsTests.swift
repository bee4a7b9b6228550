import Testing

@testable import FerryWire

/// The offer's digests section (PROTOCOL.md 11.3): the file digests the sender knows, for "already there" before the
/// data moves (11.10 rule 10). Appended after the swarm section as section 8 allows; read as absent when it does not
/// parse, so every payload of before decodes as it did.
@Suite("Offer digests section")
struct TransferOfferDigestsTests {
    static let digestA: [UInt8] = Array(repeating: 0xA5, count: 32)
    static let digestB: [UInt8] = Array(0..<32)

    static func encoded(_ offer: Offer) -> [UInt8] {
        TransferMessage.offer(offer).frame.payload.map { $0 }
    }

    static func decoded(_ payload: [UInt8]) throws -> Offer {
        guard case .offer(let offer) = try TransferMessage(frame: Frame(kind: .offer, payload: payload)) else {
            throw WireError.malformed("not an offer")
        }
        return offer
    }

    @Test func digestsRoundTripAfterAnEmptySwarmSection() throws {
        var offer = TransferSamples.offer
        offer.fileDigests = [1: Self.digestB, 0: Self.digestA]
        let payload = Self.encoded(offer)
        let plain = Self.encoded(TransferSamples.offer)
        // The offer of before, `00 00` (no swarm), the count, then the entries in index order.
        var tail: [UInt8] = [0, 0, 0, 0, 0, 2, 0, 0, 0, 0] + Self.digestA
        tail += [0, 0, 0, 1] + Self.digestB
        #expect(payload == plain + tail)
        #expect(try Self.decoded(payload) == offer)
    }

    @Test func digestsRoundTripAfterASwarmSection() throws {
        var offer = TransferSamples.offer
        offer.swarm = TransferSamples.swarm
        offer.fileDigests = [1: Self.digestB]
        let decoded = try Self.decoded(Self.encoded(offer))
        #expect(decoded == offer)
        #expect(decoded.swarm == TransferSamples.swarm)
    }

    /// The vector of PROTOCOL.md 9, written by the independent encoder: a decoder of before the section reads the
    /// offer of `transfer-offer.bin` from its first bytes and skips the rest.
    @Test func theDigestsVectorDecodesAndItsOlderLayoutIsThePlainOffer() throws {
        let payload = try TransferFrameCase(
            name: "transfer-offer-digests", message: .offer(TransferSamples.offerWithDigests)
        ).payload()
        #expect(try Self.decoded(payload) == TransferSamples.offerWithDigests)
        let plain = try TransferSamples.frameCases[0].payload()
        #expect(Array(payload.prefix(plain.count)) == plain)
    }

    @Test func anOfferWithoutDigestsIsEncodedAsBefore() throws {
        // The golden vector: the same bytes, no empty sections written.
        #expect(Self.encoded(TransferSamples.offer) == (try TransferSamples.frameCases[0].payload()))
        #expect((try Self.decoded(try TransferSamples.frameCases[0].payload())).fileDigests.isEmpty)
    }

    /// An old peer's decoder (the layout of before) skips the section as trailing bytes: it sees the offer of before.
    @Test func anOldDecoderSeesTheOfferOfBefore() throws {
        var offer = TransferSamples.offer
        offer.fileDigests = [0: Self.digestA]
        var old = try Self.decoded(Self.encoded(offer))
        old.fileDigests = [:]
        #expect(old == TransferSamples.offer)
    }

    /// A section that does not parse is absent, never an error: bytes of before stay valid.
    @Test(
        arguments: [
            [0, 0, 0x65, 0x78, 0x74, 0x21],  // `ext!` of transfer-offer-extended.bin: a count above fileCount
            [0, 0, 0, 0, 0],  // fewer than 4 bytes
            [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2],  // fewer bytes than one entry
            [0, 0, 0, 0, 0, 1, 0, 0, 0, 2] + Array(repeating: 7, count: 32),  // index 2 of 2 files
            [0, 0, 0, 0, 0, 2, 0, 0, 0, 1] + Array(repeating: 7, count: 32) + [0, 0, 0, 0]
                + Array(repeating: 7, count: 32),
            [0, 0, 0, 0, 0, 2, 0, 0, 0, 0] + Array(repeating: 7, count: 32) + [0, 0, 0, 0]
                + Array(repeating: 7, count: 32),
        ] as [[UInt8]])
    func aSectionThatDoesNotParseIsReadAsAbsent(_ tail: [UInt8]) throws {
        let payload = try TransferSamples.frameCases[0].payload() + tail
        #expect(try Self.decoded(payload) == TransferSamples.offer)
    }

    @Test func fieldsAfterTheDigestsSectionAreSkipped() throws {
        var offer = TransferSamples.offer
        offer.fileDigests = [0: Self.digestA]
        let payload = Self.encoded(offer) + AppendedFieldsTests.appended
        #expect(try Self.decoded(payload) == offer)
    }

    @Test func anEncoderRefusesADigestForNoFileOrOfTheWrongLength() {
        var offer = TransferSamples.offer
        offer.fileDigests = [2: Self.digestA]
        #expect(throws: WireError.self) { try offer.validate() }
        offer.fileDigests = [0: [1, 2, 3]]
        #expect(throws: WireError.self) { try offer.validate() }
    }

    @Test func everyTruncationOfAnOfferWithDigestsDecodesOrFailsCleanly() throws {
        var offer = TransferSamples.offer
        offer.fileDigests = [0: Self.digestA, 1: Self.digestB]
        let payload = Self.encoded(offer)
        let entriesEnd = try TransferSamples.frameCases[0].payload().count
        for length in 0..<payload.count {
            let prefix = Array(payload.prefix(length))
            if length < entriesEnd || length == entriesEnd + 1 {
                #expect(throws: WireError.self) { try Self.decoded(prefix) }
            } else {
                // The swarm section is whole: a cut digests section is absent.
                #expect(try Self.decoded(prefix) == TransferSamples.offer)
            }
        }
    }
}
