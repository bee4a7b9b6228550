import Testing

@testable import FerryWire

/// The offer's folders section (PROTOCOL.md 11.3): the empty folders of a folder sent whole, and the flags (bit 0
/// `replaces`). Appended after the digests section as section 8 allows; read as absent when it does not parse, so
/// every payload of before decodes as it did, and an offer without folders or flags is encoded as before.
@Suite("Offer folders section")
struct TransferOfferFoldersTests {
    typealias Coding = TransferOfferDigestsTests

    @Test func foldersRoundTripAfterEmptySwarmAndDigestsSections() throws {
        var offer = TransferSamples.offer
        offer.folders = ["a/empty", "b"]
        let payload = Coding.encoded(offer)
        let plain = Coding.encoded(TransferSamples.offer)
        // `00 00` (no swarm), `00 00 00 00` (no digest), flags 0, count 2, then each path as str16.
        let tail: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 7] + Array("a/empty".utf8) + [0, 1] + Array("b".utf8)
        #expect(payload == plain + tail)
        #expect(try Coding.decoded(payload) == offer)
    }

    @Test func foldersAndFlagsRoundTripWithASwarmAndDigests() throws {
        var offer = TransferSamples.offer
        offer.swarm = TransferSamples.swarm
        offer.fileDigests = [1: TransferOfferDigestsTests.digestB]
        offer.folders = ["photos/2026/Zo\u{eb}"]
        offer.flags = .replaces
        #expect(try Coding.decoded(Coding.encoded(offer)) == offer)
        offer.folders = []
        #expect(try Coding.decoded(Coding.encoded(offer)) == offer)
    }

    /// The vector of PROTOCOL.md 9, written by the independent encoder: a decoder of before the section reads the
    /// offer of `transfer-offer.bin` from its first bytes and skips the rest.
    @Test func theFoldersVectorDecodesAndItsOlderLayoutIsThePlainOffer() throws {
        let payload = try TransferFrameCase(
            name: "transfer-offer-folders", message: .offer(TransferSamples.offerWithFolders)
        ).payload()
        #expect(try Coding.decoded(payload) == TransferSamples.offerWithFolders)
        #expect(Coding.encoded(TransferSamples.offerWithFolders) == payload)
        let plain = try TransferSamples.frameCases[0].payload()
        #expect(Array(payload.prefix(plain.count)) == plain)
    }

    /// An old peer's decoder (the layout of before) skips the section as trailing bytes after the digests section.
    @Test func anOldDecoderSeesTheOfferOfBefore() throws {
        var offer = TransferSamples.offer
        offer.fileDigests = [0: TransferOfferDigestsTests.digestA]
        offer.folders = ["x"]
        var old = try Coding.decoded(Coding.encoded(offer))
        old.folders = []
        old.flags = []
        var expected = TransferSamples.offer
        expected.fileDigests = offer.fileDigests
        #expect(old == expected)
    }

    @Test func anOfferWithoutFoldersOrFlagsIsEncodedAsBefore() throws {
        #expect(Coding.encoded(TransferSamples.offer) == (try TransferSamples.frameCases[0].payload()))
        #expect(
            Coding.encoded(TransferSamples.offerWithDigests)
                == (try TransferSamples.allFrameCases.first {
                    $0.name == "transfer-offer-digests"
                }!.payload()))
    }

    /// A section that does not parse is absent, never an error.
    @Test(
        arguments: [
            [0, 0, 0, 0, 0, 0, 0x65, 0x78, 0x74, 0x21],  // 4 bytes: no count after the flags byte
            [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1],  // a count and no path
            [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0],  // an empty path
            [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 5, 0x61],  // a path cut short
            [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0xff],  // not UTF-8
            [0, 0, 0, 0, 0, 0, 1, 0, 0, 0x27, 0x11] + Array(repeating: 0x61, count: 60),  // 10 001 folders
        ] as [[UInt8]])
    func aSectionThatDoesNotParseIsReadAsAbsent(_ tail: [UInt8]) throws {
        let payload = try TransferSamples.frameCases[0].payload() + tail
        #expect(try Coding.decoded(payload) == TransferSamples.offer)
    }

    /// The folders section follows only a digests section that parsed: after `ext!` (a digests section that does
    /// not parse) nothing is read as folders.
    @Test func noFoldersAfterADigestsSectionThatDoesNotParse() throws {
        let tail: [UInt8] = [0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 1, 0, 1, 0x61]
        let payload = try TransferSamples.frameCases[0].payload() + tail
        #expect(try Coding.decoded(payload) == TransferSamples.offer)
    }

    @Test func fieldsAfterTheFoldersSectionAreSkipped() throws {
        var offer = TransferSamples.offer
        offer.folders = ["empty"]
        offer.flags = OfferFlags(rawValue: 0x81)  // an unknown bit is carried
        #expect(try Coding.decoded(Coding.encoded(offer) + AppendedFieldsTests.appended) == offer)
    }

    @Test func anEncoderRefusesTooManyFoldersOrAnEmptyOrLongPath() {
        var offer = TransferSamples.offer
        offer.folders = [""]
        #expect(throws: WireError.self) { try offer.validate() }
        offer.folders = [String(repeating: "a", count: 4097)]
        #expect(throws: WireError.self) { try offer.validate() }
        offer.folders = Array(repeating: "a", count: Limits.maxOfferFolders + 1)
        #expect(throws: WireError.self) { try offer.validate() }
        offer.folders = Array(repeating: "a", count: Limits.maxOfferFolders)
        #expect(throws: Never.self) { try offer.validate() }
    }

    @Test func everyTruncationOfAnOfferWithFoldersDecodesOrFailsCleanly() throws {
        var offer = TransferSamples.offer
        offer.folders = ["a/b", "c"]
        offer.flags = .replaces
        let payload = Coding.encoded(offer)
        let entriesEnd = try TransferSamples.frameCases[0].payload().count
        for length in 0..<payload.count {
            let prefix = Array(payload.prefix(length))
            if length < entriesEnd || length == entriesEnd + 1 {
                #expect(throws: WireError.self) { try Coding.decoded(prefix) }
            } else {
                // The swarm section is whole: a cut digests or folders section is absent.
                #expect(try Coding.decoded(prefix) == TransferSamples.offer)
            }
        }
    }
}
