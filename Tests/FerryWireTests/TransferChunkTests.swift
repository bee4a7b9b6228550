import Testing

@testable import FerryWire

@Suite("Transfer chunks")
struct TransferChunkTests {
    /// 32 distinct bytes in the digest field, so that a field read from the wrong offset shows.
    static let digest: [UInt8] = Array(0xA0...0xBF)

    static func chunkPayload(rawLength: UInt32, codec: UInt8, dataLength: Int) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(TransferSamples.transferID)
        writer.write(UInt32(1))
        writer.write(UInt64(65_536))
        writer.write(rawLength)
        writer.write(codec)
        writer.write(bytes: Self.digest)
        writer.write(bytes: [UInt8](repeating: 0x5A, count: dataLength))
        return writer.bytes
    }

    static func decode(_ payload: [UInt8]) throws -> Chunk {
        guard case .chunk(let chunk) = try TransferMessage(frame: Frame(kind: .chunk, payload: payload)) else {
            throw WireError.malformed("not a chunk")
        }
        return chunk
    }

    @Test func rawLengthRange() throws {
        #expect(throws: WireError.invalidField("rawLength: 0, not in 1...4194304")) {
            try Self.decode(Self.chunkPayload(rawLength: 0, codec: 0, dataLength: 0))
        }
        #expect(throws: WireError.invalidField("rawLength: 4194305, not in 1...4194304")) {
            try Self.decode(Self.chunkPayload(rawLength: 4_194_305, codec: 1, dataLength: 10))
        }
        #expect(throws: WireError.invalidField("rawLength: 4294967295, not in 1...4194304")) {
            try Self.decode(Self.chunkPayload(rawLength: .max, codec: 0, dataLength: 1))
        }
        let largest = try Self.decode(Self.chunkPayload(rawLength: 4_194_304, codec: 0, dataLength: 4_194_304))
        #expect(largest.data.count == Limits.maxChunkSize)
        #expect(Chunk.headerLength + Limits.maxChunkSize <= Limits.maxFramePayload)
    }

    @Test func uncompressedDataIsExactlyRawLength() throws {
        #expect(try Self.decode(Self.chunkPayload(rawLength: 5, codec: 0, dataLength: 5)).data.count == 5)
        #expect(throws: WireError.malformed("chunk: 4 data bytes for rawLength 5 with codec none")) {
            try Self.decode(Self.chunkPayload(rawLength: 5, codec: 0, dataLength: 4))
        }
        #expect(throws: WireError.malformed("chunk: 6 data bytes for rawLength 5 with codec none")) {
            try Self.decode(Self.chunkPayload(rawLength: 5, codec: 0, dataLength: 6))
        }
    }

    /// Texts say "codec \(codec)": an unknown codec is its number alone, so a goodbye never reads "codec codec 9".
    @Test func anUnknownCodecIsNamedOnceByItsNumber() {
        #expect(Codec(rawValue: 9).description == "9")
        #expect(Codec.zstdPrefixed.description == "zstd-prefixed")
        #expect(throws: WireError.malformed("chunk: 0 data bytes for rawLength 5 with codec 9")) {
            try Self.decode(Self.chunkPayload(rawLength: 5, codec: 9, dataLength: 0))
        }
    }

    @Test(arguments: [UInt8(1), 2, 3, 255])
    func compressedDataIsOneToRawLengthBytes(_ codec: UInt8) throws {
        let name = Codec(rawValue: codec).description
        #expect(throws: WireError.malformed("chunk: 0 data bytes for rawLength 5 with codec \(name)")) {
            try Self.decode(Self.chunkPayload(rawLength: 5, codec: codec, dataLength: 0))
        }
        #expect(try Self.decode(Self.chunkPayload(rawLength: 5, codec: codec, dataLength: 1)).data.count == 1)
        #expect(try Self.decode(Self.chunkPayload(rawLength: 5, codec: codec, dataLength: 5)).data.count == 5)
        #expect(throws: WireError.malformed("chunk: 6 data bytes for rawLength 5 with codec \(name)")) {
            try Self.decode(Self.chunkPayload(rawLength: 5, codec: codec, dataLength: 6))
        }
    }

    @Test func decodedFieldsAndUnknownCodecArePreserved() throws {
        let chunk = try Self.decode(Self.chunkPayload(rawLength: 9, codec: 7, dataLength: 3))
        #expect(chunk.transferID == TransferSamples.transferID)
        #expect(chunk.fileIndex == 1)
        #expect(chunk.offset == 65_536)
        #expect(chunk.rawLength == 9)
        #expect(chunk.codec == Codec(rawValue: 7))
        #expect(chunk.sha256 == Self.digest)
        #expect(Array(chunk.data) == [0x5A, 0x5A, 0x5A])
    }

    @Test func decodingCopiesNoData() throws {
        let frame = try #require(
            try {
                var decoder = FrameDecoder()
                decoder.append(try Fixtures.bytes("transfer-chunk"))
                return try decoder.nextFrame()
            }())
        guard case .chunk(let chunk) = try TransferMessage(frame: frame) else {
            Issue.record("not a chunk")
            return
        }
        #expect(chunk.data.startIndex == Chunk.headerLength)
        frame.payload.withUnsafeBufferPointer { payload in
            chunk.data.withUnsafeBufferPointer { data in
                #expect(data.baseAddress == payload.baseAddress.map { $0 + Chunk.headerLength })
            }
        }
    }

    @Test func validateMirrorsTheDecoder() {
        var chunk = TransferSamples.chunk
        #expect(throws: Never.self) { try chunk.validate() }
        chunk.data = []
        #expect(throws: WireError.malformed("chunk: 0 data bytes for rawLength 36 with codec zlib")) {
            try TransferMessage.chunk(chunk).validate()
        }
        chunk.codec = .none
        chunk.data = TransferSamples.chunkRaw[...]
        #expect(throws: Never.self) { try chunk.validate() }
        chunk.rawLength = 0
        #expect(throws: WireError.invalidField("rawLength: 0, not in 1...4194304")) { try chunk.validate() }
    }

    @Test func frameHeaderIsTheEncodedFrameWithoutItsData() throws {
        var chunk = TransferSamples.chunk
        chunk.fileIndex = 0xA1B2_C3D4
        chunk.offset = 0x0102_0304_0506_0708
        for codec in [Codec.zlib, .zstd, Codec(rawValue: 9)] {
            chunk.codec = codec
            let header = Chunk.frameHeader(
                transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset,
                rawLength: chunk.rawLength, codec: codec, sha256: chunk.sha256, dataLength: chunk.data.count)
            let encoded = TransferMessage.chunk(chunk).encoded()
            #expect(header == Array(encoded.prefix(Frame.headerLength + Chunk.headerLength)))
            #expect(header + chunk.data == encoded)
        }
    }

    @Test func codecSetsSayWhichChunksMayBeSent() {
        let zlibOnly: CodecSet = .zlib
        #expect(zlibOnly.contains(codec: .none))
        #expect(zlibOnly.contains(codec: .zlib))
        #expect(!zlibOnly.contains(codec: .zstd))
        #expect(CodecSet.known.contains(codec: Codec(rawValue: 3)))
        #expect(!CodecSet.known.contains(codec: Codec(rawValue: 4)))
        #expect(!CodecSet.zstd.contains(codec: .zstdPrefixed))
        #expect(CodecSet(rawValue: 0x04).contains(codec: .zstdPrefixed))
        #expect(CodecSet([]).contains(codec: .none))
        #expect(!CodecSet([]).contains(codec: .zlib))
        #expect(CodecSet(rawValue: 0xFF).contains(codec: .zstd))
        #expect(!CodecSet(rawValue: 0xFC).contains(codec: .zlib))
        #expect(CodecSet.known.description == "[zlib, zstd, zstd-prefixed]")
        #expect(CodecSet(rawValue: 0x81).description == "[zlib, 0x80]")
        #expect(Codec.none.description == "none")
        #expect(Codec(rawValue: 2) == .zstd)
        #expect(Codec(rawValue: 3) == .zstdPrefixed)
        #expect(Codec.zstdPrefixed.description == "zstd-prefixed")
        #expect(Codec(rawValue: 42).description == "42")
    }
}
