import Testing

@testable import FerryWire

@Suite("Transfer offers and replies")
struct TransferOfferTests {
    static let id = TransferSamples.transferID.bytes

    /// An offer payload up to (not including) its entries.
    static func offerHead(chunkSize: UInt32 = 1_048_576, codecs: UInt8 = 1, count: UInt32) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(bytes: id)
        writer.write(chunkSize)
        writer.write(codecs)
        writer.write(count)
        return writer.bytes
    }

    /// One offer entry with raw string bytes, so invalid values can be written.
    static func entry(path: [UInt8], nanos: UInt32 = 0, mediaType: [UInt8] = []) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(UInt16(path.count))
        writer.write(bytes: path)
        writer.write(UInt64(10))
        writer.write(UInt16(0o644))
        writer.write(UInt64(1_767_225_600))
        writer.write(nanos)
        writer.write(UInt8(mediaType.count))
        writer.write(bytes: mediaType)
        writer.write(UInt32(0))
        writer.write(UInt32(0))
        return writer.bytes
    }

    static func decodeOffer(_ payload: [UInt8]) throws -> TransferMessage {
        try TransferMessage(frame: Frame(kind: .offer, payload: payload))
    }

    @Test func hostileFileCountsFailBeforeAllocating() throws {
        #expect(throws: WireError.invalidField("fileCount: 4294967295, not in 1...10000")) {
            try Self.decodeOffer(Self.offerHead(count: .max) + [0, 1, 0x61])
        }
        #expect(throws: WireError.invalidField("fileCount: 10001, not in 1...10000")) {
            try Self.decodeOffer(Self.offerHead(count: 10_001))
        }
        #expect(throws: WireError.invalidField("fileCount: 0, not in 1...10000")) {
            try Self.decodeOffer(Self.offerHead(count: 0))
        }
        // The largest allowed count with one entry present: reserves room for one entry, then runs out.
        #expect(throws: WireError.malformed("offer: truncated at path")) {
            try Self.decodeOffer(Self.offerHead(count: 10_000) + Self.entry(path: [0x61]))
        }
        #expect(throws: WireError.invalidField("count: 4294967295, not in 0...10000")) {
            try TransferMessage(
                frame: Frame(kind: .offerReply, payload: Self.id + [1, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF]))
        }
        #expect(throws: WireError.malformed("offerReply: truncated at accepted")) {
            try TransferMessage(frame: Frame(kind: .offerReply, payload: Self.id + [1, 0, 0, 1, 0, 0, 0x27, 0x10]))
        }
    }

    @Test func reservationIsBoundedByTheUnreadBytes() {
        let reader = ByteReader([UInt8](repeating: 0, count: 100)[...], context: "test")
        #expect(reader.boundedCapacity(count: 10_000, minimumElementLength: OfferedFile.minimumEncodedLength) == 2)
        #expect(reader.boundedCapacity(count: 10_000, minimumElementLength: FileDecision.encodedLength) == 11)
        #expect(reader.boundedCapacity(count: 3, minimumElementLength: 9) == 3)
        #expect(reader.boundedCapacity(count: 5, minimumElementLength: 0) == 5)
        let empty = ByteReader([UInt8]()[...], context: "test")
        #expect(empty.boundedCapacity(count: Int(UInt32.max), minimumElementLength: 34) == 0)
    }

    @Test(arguments: [
        (UInt32(0), false), (65_535, false), (65_536, true), (1_048_576, true), (4_194_304, true),
        (4_194_305, false), (.max, false),
    ])
    func chunkSizeRange(_ chunkSize: UInt32, _ valid: Bool) throws {
        let payload = Self.offerHead(chunkSize: chunkSize, count: 1) + Self.entry(path: [0x61])
        var offer = TransferSamples.offer
        offer.chunkSize = chunkSize
        if valid {
            guard case .offer(let decoded) = try Self.decodeOffer(payload) else { Issue.record("not an offer"); return }
            #expect(decoded.chunkSize == chunkSize)
            #expect(throws: Never.self) { try offer.validate() }
        } else {
            let message = "chunkSize: \(chunkSize), not in 65536...4194304"
            #expect(throws: WireError.invalidField(message)) { try Self.decodeOffer(payload) }
            #expect(throws: WireError.invalidField(message)) { try offer.validate() }
        }
    }

    @Test func entryFieldRules() throws {
        let head = Self.offerHead(count: 1)
        #expect(throws: WireError.invalidField("path: empty")) { try Self.decodeOffer(head + Self.entry(path: [])) }
        #expect(throws: WireError.invalidField("path: invalid UTF-8")) {
            try Self.decodeOffer(head + Self.entry(path: [0x61, 0xC3]))
        }
        let longest = [UInt8](repeating: 0x61, count: 4096)
        guard case .offer(let offer) = try Self.decodeOffer(head + Self.entry(path: longest)) else {
            Issue.record("not an offer")
            return
        }
        #expect(offer.files[0].path.utf8.count == 4096)
        #expect(throws: WireError.invalidField("path: 4097 bytes, more than the limit of 4096")) {
            try Self.decodeOffer(head + Self.entry(path: longest + [0x61]))
        }
        // Paths are only length- and UTF-8-checked here: the name validator decides containment.
        #expect(throws: Never.self) { try Self.decodeOffer(head + Self.entry(path: Array("../\u{0}x".utf8))) }
        #expect(throws: WireError.invalidField("mtimeNanos: 1000000000, not below 1000000000")) {
            try Self.decodeOffer(head + Self.entry(path: [0x61], nanos: 1_000_000_000))
        }
        #expect(throws: Never.self) { try Self.decodeOffer(head + Self.entry(path: [0x61], nanos: 999_999_999)) }
        for bad in ["image/ jpeg", "image/jpég", "a\tb", "\u{7F}"] {
            #expect(throws: WireError.self, "\(bad)") {
                try Self.decodeOffer(head + Self.entry(path: [0x61], mediaType: Array(bad.utf8)))
            }
        }
        #expect(throws: WireError.invalidField("mediaType: not printable ASCII")) {
            try Self.decodeOffer(head + Self.entry(path: [0x61], mediaType: Array("a b".utf8)))
        }
        let type127 = [UInt8](repeating: 0x7E, count: 127)
        #expect(throws: Never.self) { try Self.decodeOffer(head + Self.entry(path: [0x61], mediaType: type127)) }
        #expect(throws: WireError.invalidField("mediaType: 128 bytes, more than the limit of 127")) {
            try Self.decodeOffer(head + Self.entry(path: [0x61], mediaType: type127 + [0x21]))
        }
    }

    @Test func validateMirrorsTheDecoder() {
        var file = TransferSamples.offer.files[0]
        file.path = ""
        #expect(throws: WireError.invalidField("path: empty")) { try file.validate() }
        file.path = String(repeating: "ë", count: 2049)  // 4098 UTF-8 bytes
        #expect(throws: WireError.invalidField("path: 4098 bytes, more than the limit of 4096")) { try file.validate() }
        file.path = "ok"
        file.mediaType = "text/plain; charset=utf-8"
        #expect(throws: WireError.invalidField("mediaType: not printable ASCII")) { try file.validate() }
        file.mediaType = ""
        file.modificationTime.nanoseconds = 1_000_000_000
        #expect(throws: WireError.self) { try file.validate() }
        var offer = TransferSamples.offer
        offer.files = []
        #expect(throws: WireError.invalidField("fileCount: 0, not in 1...10000")) { try offer.validate() }
        offer.files = Array(repeating: TransferSamples.offer.files[1], count: 10_001)
        #expect(throws: WireError.invalidField("fileCount: 10001, not in 1...10000")) { try offer.validate() }
        offer.files.removeLast()
        #expect(throws: Never.self) { try offer.validate() }
    }

    @Test func offerOverTheFramePayloadLimitIsRefused() throws {
        let longPath = String(repeating: "p", count: Limits.maxTransferPathLength)
        let file = OfferedFile(path: longPath, size: 1, modificationTime: TransferSamples.time)
        let entryLength = 33 + Limits.maxTransferPathLength
        let fitting = (Limits.maxFramePayload - Offer.fixedLength) / entryLength
        var offer = Offer(transferID: TransferSamples.transferID, chunkSize: 65_536, codecs: [], files: [])
        offer.files = Array(repeating: file, count: fitting)
        #expect(throws: Never.self) { try offer.validate() }
        #expect(TransferMessage.offer(offer).frame.payload.count == Offer.fixedLength + fitting * entryLength)
        offer.files.append(file)
        let length = Offer.fixedLength + (fitting + 1) * entryLength
        #expect(throws: WireError.payloadTooLarge(length: length, limit: Limits.maxFramePayload)) {
            try TransferMessage.offer(offer).validate()
        }
    }

    @Test func replyRules() throws {
        #expect(throws: WireError.invalidField("accepted: value 2, not 0 or 1")) {
            try TransferMessage(frame: Frame(kind: .offerReply, payload: Self.id + [2, 0, 0, 1, 0, 0, 0, 0]))
        }
        #expect(throws: WireError.invalidField("accepted: value 255, not 0 or 1")) {
            try TransferMessage(
                frame: Frame(
                    kind: .offerReply,
                    payload: Self.id + [1, 0, 0, 1, 0, 0, 0, 1, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0]))
        }
        #expect(throws: WireError.invalidField("count: 1 decisions in a denying reply")) {
            try TransferMessage(
                frame: Frame(
                    kind: .offerReply,
                    payload: Self.id + [0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
        }
        var denied = OfferReply.denying(TransferSamples.transferID, reason: .deniedByUser)
        #expect(throws: Never.self) { try denied.validate() }
        denied.files = [.skip]
        #expect(throws: WireError.invalidField("count: 1 decisions in a denying reply")) { try denied.validate() }
        // An accepting reply with no decisions, or with more than the offer had, is the engine's to judge.
        let empty = TransferMessage.offerReply(.accepting(TransferSamples.transferID, codecs: [], files: []))
        #expect(try TransferMessage(frame: empty.frame) == empty)
        var many = OfferReply.accepting(TransferSamples.transferID, codecs: .zlib, files: [])
        many.files = Array(repeating: .accept(from: 65_536), count: Limits.maxOfferFiles)
        #expect(try TransferMessage(frame: TransferMessage.offerReply(many).frame) == .offerReply(many))
        many.files.append(.skip)
        #expect(throws: WireError.invalidField("count: 10001, not in 0...10000")) { try many.validate() }
    }

    @Test func largestOfferRoundTrips() throws {
        let files = (0..<Limits.maxOfferFiles).map { index in
            OfferedFile(path: "dir/file-\(index).bin", size: UInt64(index), modificationTime: TransferSamples.time)
        }
        let offer = TransferMessage.offer(
            Offer(transferID: TransferSamples.transferID, chunkSize: 65_536, codecs: .known, files: files))
        #expect(throws: Never.self) { try offer.validate() }
        #expect(try TransferMessage(frame: offer.frame) == offer)
    }
}
