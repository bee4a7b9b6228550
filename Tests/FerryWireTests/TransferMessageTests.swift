import Testing

@testable import FerryWire

@Suite("Transfer messages")
struct TransferMessageTests {
    /// Every payload whose strict prefixes must all be malformed (a chunk's data has no length of its own: it is
    /// covered by `chunkPrefixes`).
    static let truncatable = TransferSamples.frameCases.filter { $0.message.kind != .chunk }

    @Test(arguments: truncatable)
    func everyStrictPrefixIsMalformed(_ golden: TransferFrameCase) throws {
        let payload = try golden.payload()
        let context = golden.message.kind.transferContext
        for length in 0..<payload.count {
            let frame = Frame(kind: golden.message.kind, payload: Array(payload[..<length]))
            let error = #expect(throws: WireError.self, "prefix of \(length) bytes") {
                try TransferMessage(frame: frame)
            }
            guard case .malformed(let what) = error else {
                Issue.record("prefix of \(length) bytes: \(String(describing: error))")
                continue
            }
            #expect(what.hasPrefix("\(context): truncated at "), "\(what)")
        }
    }

    @Test func chunkPrefixes() throws {
        let payload = try TransferSamples.frameCases.first { $0.name == "transfer-chunk" }!.payload()
        for length in 0..<payload.count {
            let frame = Frame(kind: .chunk, payload: Array(payload[..<length]))
            if length <= Chunk.headerLength {
                // Inside the header, or no data at all: malformed.
                #expect(throws: WireError.self, "prefix of \(length) bytes") { try TransferMessage(frame: frame) }
                continue
            }
            // Compressed data shorter than sent still fits 1...rawLength: the wire cannot tell, inflation and the
            // chunk digest do (the receiver answers corrupt).
            var expected = TransferSamples.chunk
            expected.data = payload[Chunk.headerLength..<length]
            #expect(try TransferMessage(frame: frame) == .chunk(expected))
        }
        var stored = TransferSamples.chunk
        stored.codec = .none
        stored.data = TransferSamples.chunkRaw[...]
        let storedPayload = TransferMessage.chunk(stored).frame.payload
        for length in 0..<storedPayload.count {
            #expect(throws: WireError.self) {
                try TransferMessage(frame: Frame(kind: .chunk, payload: Array(storedPayload[..<length])))
            }
        }
    }

    @Test func truncationNamesTheField() {
        let payload = TransferMessage.offer(TransferSamples.offer).frame.payload
        #expect(throws: WireError.malformed("offer: truncated at transferID")) {
            try TransferMessage(frame: Frame(kind: .offer, payload: Array(payload[..<10])))
        }
        #expect(throws: WireError.malformed("offer: truncated at mediaType")) {
            try TransferMessage(frame: Frame(kind: .offer, payload: Array(payload[..<70])))
        }
        #expect(throws: WireError.malformed("fileEnd: truncated at digest")) {
            try TransferMessage(frame: Frame(kind: .fileEnd, payload: Array(repeating: 0, count: 40)))
        }
    }

    @Test func trailingBytesAreIgnored() throws {
        for golden in Self.truncatable {
            // fileResult's and offerReply's first byte after their last field is their flags byte (11.8, 11.4), and
            // an offer's first two are its swarm section's member count (11.3, 0 = none): trailing bytes come after.
            let flags: [UInt8] =
                switch golden.message.kind {
                case .fileResult, .offerReply: [0x00]
                case .offer: [0x00, 0x00]
                default: []
                }
            let frame = Frame(
                kind: golden.message.kind, payload: try golden.payload() + flags + [0xDE, 0xAD, 0xBE, 0xEF])
            #expect(try TransferMessage(frame: frame) == golden.message, "\(golden.name)")
        }
    }

    /// The optional flags byte of fileResult (PROTOCOL.md 11.8): sent only when a flag is set, bit 0 `identical`.
    @Test func fileResultFlagsAreOptionalOnlyBitZeroCountsAndOtherBitsArePreserved() throws {
        let id = TransferSamples.transferID
        let head = id.bytes + [0, 0, 0, 7, 0, 1, 0x61]  // file 7, published, detail "a"
        let plain = FileResult(transferID: id, fileIndex: 7, status: .published, detail: "a")
        #expect(TransferMessage.fileResult(plain).frame.payload == head, "no flags byte when none is set")
        var identical = plain
        identical.identical = true
        #expect(TransferMessage.fileResult(identical).frame.payload == head + [0x01])
        #expect(try TransferMessage(frame: Frame(kind: .fileResult, payload: head + [0x01])) == .fileResult(identical))
        // Other bits are an open set: not identical, but carried as received, so a re-encoding is a prefix of the
        // payload (the fuzz targets' round-trip invariant) and a newer peer's bits survive.
        let unknown = try TransferMessage(frame: Frame(kind: .fileResult, payload: head + [0xFE, 9]))
        guard case .fileResult(let decoded) = unknown else { throw WireError.malformed("not a file result") }
        #expect(!decoded.identical && decoded.flags == 0xFE)
        #expect(unknown.frame.payload == head + [0xFE])
        #expect(try TransferMessage(frame: Frame(kind: .fileResult, payload: head + [0x00])) == .fileResult(plain))
    }

    @Test(arguments: [UInt16(0x010D), 0x0142, 0x01FF, 0x0001, 0x0005, 0x8100])
    func kindsOtherThanTheThirteenAreUnknownCritical(_ kind: UInt16) {
        #expect(throws: WireError.unknownCriticalFrame(kind: kind)) {
            try TransferMessage(frame: Frame(kind: FrameKind(kind), payload: [1, 2, 3]))
        }
    }

    @Test func transferKindsAreCriticalAndInTheTransferRange() {
        let kinds = FrameKind.transferMessageKinds
        #expect(kinds.map(\.rawValue) == Array(0x0100...0x010C))
        for kind in kinds {
            #expect(!kind.isIgnorable)
            #expect(FrameKind.transferKinds.contains(kind.rawValue))
        }
        // One fixture of each kind, two chunks (zlib, zstdPrefixed).
        #expect(TransferSamples.frameCases.map(\.message.kind).filter { $0 != .chunk } == kinds.filter { $0 != .chunk })
    }

    @Test func roundTripOfEveryMessage() throws {
        let other = TransferID.random()
        var negative = TransferSamples.offer
        negative.files[1].modificationTime = FileTime(seconds: -86_400, nanoseconds: 999_999_999)
        negative.codecs = CodecSet(rawValue: 0xFF)
        negative.chunkSize = UInt32(Limits.maxChunkSize)
        let messages: [TransferMessage] =
            TransferSamples.frameCases.map(\.message) + [
                .offer(negative),
                .offerReply(.denying(other, reason: .insufficientSpace, detail: "needs 2 GB, 1 GB free")),
                .offerReply(.accepting(other, codecs: [.zlib, .zstd], files: [.accept(from: 1 << 40)])),
                .offerReply(
                    OfferReply(
                        transferID: other, accepted: false, reason: OfferDenyReason(rawValue: 77),
                        codecs: CodecSet(rawValue: 0x80), files: [])),
                .chunk(
                    Chunk(
                        transferID: other, fileIndex: .max, offset: .max, rawLength: 3, codec: .none,
                        sha256: Array(repeating: 0xFF, count: 32), data: [1, 2, 3])),
                .chunk(
                    Chunk(
                        transferID: other, fileIndex: 2, offset: 0, rawLength: 9, codec: Codec(rawValue: 200),
                        sha256: Array(repeating: 0, count: 32), data: [7])),
                .chunkAck(ChunkAck(transferID: other, fileIndex: 9, offset: 1 << 20, status: .corrupt)),
                .chunkAck(ChunkAck(transferID: other, fileIndex: 9, offset: 0, status: ChunkStatus(rawValue: 250))),
                .fileEnd(FileEnd(transferID: other, fileIndex: 0, digest: Array(repeating: 0xEE, count: 32))),
                .fileResult(FileResult(transferID: other, fileIndex: 3, status: .corruptChunks, detail: "chunk 🚢")),
                .fileResult(FileResult(transferID: other, fileIndex: 3, status: FileStatus(rawValue: 99))),
                .fileResult(
                    FileResult(transferID: other, fileIndex: 4, status: .published, detail: "a", identical: true)),
                .cancel(TransferCancel(transferID: other, reason: .diskFull)),
                .cancel(TransferCancel(transferID: other, reason: CancelReason(rawValue: 0), detail: "x")),
            ]
        for message in messages {
            #expect(throws: Never.self) { try message.validate() }
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            decoder.append(message.encoded())
            let frame = try #require(try decoder.nextFrame())
            #expect(try TransferMessage(frame: frame) == message)
        }
    }

    @Test func everyFixtureThroughTheFrameDecoderInAnySplit() throws {
        let frames = TransferSamples.frameCases.map(\.message.frame)
        let stream = try TransferSamples.frameCases.flatMap { try $0.bytes() }
        try DecoderVerifier.verify(stream: stream, expected: frames)
        for golden in TransferSamples.frameCases {
            try DecoderVerifier.verifyPrefixesNeedMore(of: try golden.bytes())
        }
    }

    @Test func smallFieldRules() {
        let id = TransferSamples.transferID.bytes
        #expect(throws: WireError.invalidField("detail: invalid UTF-8")) {
            try TransferMessage(frame: Frame(kind: .fileResult, payload: id + [0, 0, 0, 0, 0, 2, 0xC3, 0x28]))
        }
        #expect(throws: WireError.invalidField("detail: invalid UTF-8")) {
            try TransferMessage(frame: Frame(kind: .transferCancel, payload: id + [1, 1, 0xFF]))
        }
        #expect(throws: WireError.invalidField("digest: 31 bytes, not 32")) {
            try FileEnd(transferID: TransferSamples.transferID, fileIndex: 0, digest: Array(repeating: 1, count: 31))
                .validate()
        }
        var chunk = TransferSamples.chunk
        chunk.sha256 = Array(repeating: 1, count: 4)  // a CRC-32's worth: not a chunk digest
        #expect(throws: WireError.invalidField("sha256: 4 bytes, not 32")) { try chunk.validate() }
        let long = String(repeating: "é", count: 128)  // 256 UTF-8 bytes
        #expect(throws: WireError.invalidField("detail: 256 bytes, more than the limit of 255")) {
            try TransferMessage.fileResult(
                FileResult(
                    transferID: TransferSamples.transferID, fileIndex: 0,
                    status: .writeFailed, detail: long)
            ).validate()
        }
        #expect(throws: WireError.self) {
            try TransferMessage.cancel(
                TransferCancel(
                    transferID: TransferSamples.transferID, reason: .timedOut,
                    detail: long)
            ).validate()
        }
        #expect(throws: WireError.self) {
            try TransferMessage.offerReply(.denying(TransferSamples.transferID, reason: .busy, detail: long)).validate()
        }
    }
}

extension FrameKind {
    /// The context name the transfer decoders use in their error messages.
    var transferContext: String {
        switch self {
        case .offer: "offer"
        case .offerReply: "offerReply"
        case .chunk: "chunk"
        case .chunkAck: "chunkAck"
        case .fileEnd: "fileEnd"
        case .fileResult: "fileResult"
        case .swarmMembers: "swarmMembers"
        case .chunkDigests: "chunkDigests"
        case .swarmHave: "swarmHave"
        case .swarmRequest: "swarmRequest"
        case .swarmRefuse: "swarmRefuse"
        case .swarmReport: "swarmReport"
        default: "transferCancel"
        }
    }
}
