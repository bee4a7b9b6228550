import FerryTestSupport
import Testing

@testable import FerryWire

@Suite("Transfer identifiers and values")
struct TransferIdentifierTests {
    @Test func transferIDBytesAndHex() {
        let id = TransferSamples.transferID
        #expect(id.description == "101112131415161718191a1b1c1d1e1f")
        #expect(TransferID(hex: id.description) == id)
        #expect(TransferID(hex: "101112131415161718191A1B1C1D1E1F") == id)
        #expect(TransferID(hex: "101112131415161718191a1b1c1d1e1") == nil)
        #expect(TransferID(hex: "101112131415161718191a1b1c1d1e1f0") == nil)
        #expect(TransferID(hex: "101112131415161718191a1b1c1d1e1g") == nil)
        #expect(TransferID(hex: "") == nil)
        #expect(TransferID(bytes: Array(repeating: 0, count: 15)) == nil)
        #expect(TransferID(bytes: Array(repeating: 0, count: 17)) == nil)
        #expect(TransferID(bytes: Array(0x10...0x1f))?.bytes == Array(0x10...0x1f))
    }

    @Test func randomTransferIDs() {
        let first = TransferID.random()
        #expect(first.bytes.count == TransferID.length)
        #expect(TransferID.random() != first)
        var generator = SplitMix64(seed: 7)
        var again = SplitMix64(seed: 7)
        let seeded = TransferID.random(using: &generator)
        #expect(TransferID.random(using: &again) == seeded)
        #expect(TransferID.random(using: &generator) != seeded)
    }

    @Test func fileTimes() throws {
        let half = FileTime(seconds: 1_767_225_600, nanoseconds: 500_000_000)
        #expect(half.description == "1767225600.500000000")
        #expect(FileTime(seconds: -1, nanoseconds: 7).description == "-1.000000007")
        #expect(FileTime(seconds: 5) < FileTime(seconds: 5, nanoseconds: 1))
        #expect(FileTime(seconds: 4, nanoseconds: 999_999_999) < FileTime(seconds: 5))
        #expect(FileTime(seconds: -2, nanoseconds: 5) < FileTime(seconds: -1))
        #expect(throws: Never.self) { try FileTime(seconds: .min, nanoseconds: 999_999_999).validate() }
        #expect(throws: WireError.invalidField("mtimeNanos: 4294967295, not below 1000000000")) {
            try FileTime(seconds: 0, nanoseconds: .max).validate()
        }
        var offer = TransferSamples.offer
        offer.files[0].modificationTime = FileTime(seconds: .min, nanoseconds: 0)
        offer.files[1].modificationTime = FileTime(seconds: .max, nanoseconds: 999_999_999)
        #expect(try TransferMessage(frame: TransferMessage.offer(offer).frame) == .offer(offer))
    }

    @Test func decisionsAndReplyBuilders() {
        #expect(FileDecision.skip == FileDecision(accepted: false, resumeOffset: 0))
        #expect(FileDecision.accept() == FileDecision(accepted: true, resumeOffset: 0))
        #expect(FileDecision.accept(from: 131_072).resumeOffset == 131_072)
        let denied = OfferReply.denying(TransferSamples.transferID, reason: .busy, detail: "3 transfers running")
        #expect(!denied.accepted)
        #expect(denied.files.isEmpty)
        #expect(denied.codecs.isEmpty)
        let accepted = OfferReply.accepting(TransferSamples.transferID, codecs: .zlib, files: [.skip])
        #expect(accepted.accepted)
        #expect(accepted.reason == .unspecified)
        #expect(accepted.reason.rawValue == 0)
    }

    @Test func descriptions() {
        #expect(OfferDenyReason.deniedByUser.description == "denied by the user")
        #expect(OfferDenyReason.noAnswer.description == "nobody answered in time")
        #expect(OfferDenyReason.notAccepting.description == "not accepting files")
        #expect(OfferDenyReason.insufficientSpace.description == "not enough free disk space")
        #expect(OfferDenyReason.invalidOffer.description == "the offer was invalid")
        #expect(OfferDenyReason.busy.description == "the receiver is busy")
        #expect(
            OfferDenyReason.nobodyToAsk.description == "nobody is there to answer, so only trusted peers are accepted")
        #expect(OfferDenyReason.tooManyOffers.rawValue == 8)
        #expect(OfferDenyReason.tooManyOffers.description == "too many offers; try again later")
        #expect(OfferDenyReason(rawValue: 99).description == "unknown reason (99)")
        #expect(ChunkStatus.stored.description == "stored")
        #expect(ChunkStatus.corrupt.description == "corrupt")
        #expect(ChunkStatus.storedFromPeer.rawValue == 2)
        #expect(ChunkStatus(rawValue: 3).description == "unknown status (3)")
        let statuses: [(FileStatus, UInt8)] = [
            (.published, 0), (.hashMismatch, 1), (.writeFailed, 2), (.corruptChunks, 3), (.refused, 4),
            (.cancelled, 5), (.sourceChanged, 6),
        ]
        for (status, raw) in statuses {
            #expect(status.rawValue == raw)
            #expect(!status.description.contains("unknown"))
            #expect(status.isSuccess == (status == .published))
        }
        #expect(FileStatus(rawValue: 7).description == "unknown status (7)")
        let reasons: [(CancelReason, UInt8)] = [
            (.cancelledByUser, 1), (.diskFull, 2), (.protocolError, 3), (.timedOut, 4), (.readFailed, 5),
            (.shuttingDown, 6),
        ]
        for (reason, raw) in reasons {
            #expect(reason.rawValue == raw)
            #expect(!reason.description.contains("unknown"))
        }
        #expect(CancelReason(rawValue: 0).description == "unknown reason (0)")
    }

    @Test func limits() {
        #expect(Limits.maxTransferPathLength == 4096)
        #expect(Limits.minChunkSize == 65_536)
        #expect(Limits.maxChunkSize == 4_194_304)
        #expect(Limits.defaultChunkSize == 1_048_576)
        #expect(Limits.maxOfferFiles == 10_000)
        #expect(Limits.maxMediaTypeLength == 127)
        #expect((Limits.minChunkSize...Limits.maxChunkSize).contains(Limits.defaultChunkSize))
    }
}
