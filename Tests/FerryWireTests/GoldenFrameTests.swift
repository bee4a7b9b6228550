import Testing

@testable import FerryWire

/// Pins the wire format to the committed fixtures, both ways: encoding a value yields the fixture's bytes and
/// decoding the fixture yields the value. A change that breaks one of these breaks compatibility with peers.
@Suite("Golden frames")
struct GoldenFrameTests {
    @Test func prefaceBothWays() throws {
        let bytes = try Fixtures.bytes("preface")
        #expect(Preface.encode() == bytes)
        #expect(Preface.encode(.current) == bytes)
        #expect(try Preface.decode(bytes[...]) == .current)
    }

    @Test(arguments: Samples.frameCases)
    func frameDecodes(_ golden: FrameCase) throws {
        let bytes = try golden.bytes()
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxHelloPayload)
        decoder.append(bytes)
        let frame = try #require(try decoder.nextFrame())
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 0)
        #expect(frame.kind == golden.message.kind)
        #expect(try SessionMessage(frame: frame) == golden.message)
    }

    @Test(arguments: Samples.frameCases.filter(\.encodes))
    func frameEncodes(_ golden: FrameCase) throws {
        let bytes = try golden.bytes()
        #expect(golden.message.encoded() == bytes)
        #expect(golden.message.frame.encoded() == bytes)
        var appended: [UInt8] = [0xAA]
        golden.message.frame.encode(into: &appended)
        #expect(appended == [0xAA] + bytes)
    }

    @Test func unknownIgnorableFrameEncodes() throws {
        let frame = Frame(kind: FrameKind(0x8123), payload: [1, 2, 3])
        #expect(frame.encoded() == (try Fixtures.bytes("unknown-ignorable")))
    }

    @Test func extendedHelloIsTheHelloPlusExtensionBytes() throws {
        let plain = SessionMessage.hello(Samples.helloExtended).frame
        let extended = Frame(kind: .hello, payload: plain.payload + Array("ext!".utf8))
        #expect(extended.encoded() == (try Fixtures.bytes("hello-extended")))
    }

    /// The commitment in `hello-acceptor` is the SHA-256 of the `pairing` vector's nonce (computed by Python's hashlib).
    @Test func theAcceptorsCommitmentIsTheHashOfThePairingNonce() {
        #expect(SHA256Hasher.digest(Samples.pairingNonce) == Samples.pairingCommitment)
    }

    @Test func datagramBothWays() throws {
        let bytes = try Fixtures.bytes("datagram")
        #expect(try Samples.datagram.encoded() == bytes)
        #expect(try Datagram(decoding: bytes[...]) == Samples.datagram)
        #expect(Samples.datagram.sessionTag == 0x5e7f_3845)
    }

    @Test func beaconBothWays() throws {
        let bytes = try Fixtures.bytes("beacon")
        #expect(Samples.beacon.encoded() == bytes)
        #expect(try Beacon(decoding: bytes[...]) == Samples.beacon)
    }

    @Test(arguments: TransferSamples.allFrameCases)
    func transferFrameDecodes(_ golden: TransferFrameCase) throws {
        let bytes = try golden.bytes()
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        decoder.append(bytes)
        let frame = try #require(try decoder.nextFrame())
        #expect(try decoder.nextFrame() == nil)
        #expect(frame.kind == golden.message.kind)
        // The session passes the frame whole; the transfer layer decodes it.
        #expect(try SessionMessage(frame: frame) == .transfer(frame))
        #expect(try TransferMessage(frame: frame) == golden.message)
        // Member-to-member frames carry the swarm ID where the others carry the transfer ID.
        let memberFrames: [FrameKind] = [.swarmHave, .swarmRequest, .swarmRefuse]
        let id = memberFrames.contains(frame.kind) ? TransferSamples.swarmID.transferID : TransferSamples.transferID
        #expect(try TransferMessage(frame: frame).transferID == id)
    }

    @Test(arguments: TransferSamples.allFrameCases)
    func transferFrameEncodes(_ golden: TransferFrameCase) throws {
        let bytes = try golden.bytes()
        #expect(throws: Never.self) { try golden.message.validate() }
        #expect(golden.message.encoded() == bytes)
        #expect(golden.message.frame.encoded() == bytes)
        #expect(SessionMessage.transfer(golden.message.frame).encoded() == bytes)
    }

    @Test func transferChunkFrameHeaderPlusDataIsTheFixture() throws {
        let chunk = TransferSamples.chunk
        let header = Chunk.frameHeader(
            transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, rawLength: chunk.rawLength,
            codec: chunk.codec, sha256: chunk.sha256, dataLength: chunk.data.count)
        #expect(header.count == Frame.headerLength + Chunk.headerLength)
        #expect(header + chunk.data == (try Fixtures.bytes("transfer-chunk")))
    }

    /// The zstdPrefixed fixture's data, a zstd frame written by hand, inflates with its prefix (the file's first
    /// chunk) to the chunk's bytes, whose SHA-256 is the one in the frame; without the prefix it is corrupt.
    @Test func transferPrefixedChunkInflatesWithItsPreviousChunk() throws {
        let chunk = TransferSamples.chunkPrefixed
        let file = TransferSamples.prefixedFile
        let raw = try ChunkInflater.inflate(chunk.data, rawLength: 36, prefix: file[..<65_536])
        #expect(raw[...] == file[65_536...])
        #expect(FileDigest.chunkDigest(raw) == chunk.sha256)
        #expect(throws: CompressionError.self) {
            try ChunkInflater.inflate(chunk.data, algorithm: .zstd, rawLength: 36)
        }
        #expect(throws: CompressionError.self) {
            try ChunkInflater.inflate(chunk.data, rawLength: 35, prefix: file[..<65_536])
        }
    }

    @Test func beaconQueryBothWays() throws {
        let bytes = try Fixtures.bytes("beacon-query")
        #expect(Samples.beaconQuery.encoded() == bytes)
        let decoded = try Beacon(decoding: bytes[...])
        #expect(decoded == Samples.beaconQuery)
        #expect(decoded.flags.contains(.query))
        #expect(!decoded.flags.contains(.available))
    }
}
