@testable import FerryWire

/// The values the transfer fixtures `Fixtures/wire/transfer-*.bin` encode (docs/PROTOCOL.md section 9; the
/// fixtures are written by the independent encoder `Fixtures/wire/generate-transfer.py`).
enum TransferSamples {
    static let transferID = TransferID(bytes: Array(0x10...0x1f))!
    static let time = FileTime(seconds: 1_767_225_600)

    /// "photos/Zoë.jpg" with a precomposed "ë" (c3 ab).
    static let photoPath = "photos/Zo\u{EB}.jpg"

    static let offer = Offer(
        transferID: transferID, chunkSize: 1_048_576, codecs: [.zlib, .zstd],
        files: [
            OfferedFile(
                path: photoPath, size: 123_456, permissions: 0o644,
                modificationTime: FileTime(seconds: 1_767_225_600, nanoseconds: 500_000_000),
                mediaType: "image/jpeg", pixelWidth: 4032, pixelHeight: 3024),
            OfferedFile(path: "notes.txt", size: 0, permissions: 0o600, modificationTime: time),
        ])

    static let offerReply = OfferReply.accepting(transferID, codecs: .zlib, files: [.accept(from: 0), .skip])

    static let chunkRaw = Array("ferry ferry ferry ferry ferry ferry\n".utf8)
    /// Raw deflate of `chunkRaw` as Python's zlib (level 9) wrote it.
    static let chunkData: [UInt8] = [0x4b, 0x4b, 0x2d, 0x2a, 0xaa, 0x54, 0x48, 0xc3, 0x47, 0x72, 0x01, 0x00]

    /// SHA-256 of `chunkRaw`, as Python's hashlib computed it (`d1f17968...8b05281f`).
    static let chunkDigest: [UInt8] = [
        0xd1, 0xf1, 0x79, 0x68, 0x82, 0xdb, 0x3c, 0x11, 0x72, 0xe1, 0xc6, 0xd4, 0xc8, 0x42, 0x7f, 0x10,
        0x98, 0x62, 0x34, 0x84, 0x8a, 0x86, 0xcd, 0x2d, 0xff, 0x75, 0xe4, 0x17, 0x8b, 0x05, 0x28, 0x1f,
    ]

    static let chunk = Chunk(
        transferID: transferID, fileIndex: 0, offset: 0, rawLength: 36, codec: .zlib, sha256: chunkDigest,
        data: chunkData[...])

    /// The file of the zstdPrefixed fixture: the 36-byte line of `chunkRaw` repeated to 65 572 bytes, sent at chunk
    /// size 65 536; its second chunk (36 bytes) has the first as its prefix.
    static let prefixedFile: [UInt8] = Array(
        (0..<65_572).map { chunkRaw[$0 % chunkRaw.count] })
    /// The hand-written zstd frame of the second chunk (generate-transfer.py): one sequence, a match of 36 bytes at
    /// distance 36, into the prefix.
    static let prefixedData: [UInt8] = [
        0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x00, 0x24, 0x00, 0x00, 0x00, 0x35, 0x00, 0x00, 0x00, 0x01, 0x00, 0x0f, 0xa9,
        0x80,
    ]
    /// SHA-256 of the second chunk's 36 bytes, as Python's hashlib computed it (`d627b64e...1101c553`).
    static let prefixedDigest: [UInt8] = [
        0xd6, 0x27, 0xb6, 0x4e, 0xc6, 0x82, 0x6a, 0x45, 0x8a, 0xde, 0xcd, 0xd5, 0xaf, 0xcd, 0xe9, 0xd1,
        0xc2, 0x5e, 0x0a, 0xa2, 0xa8, 0x01, 0xd3, 0x26, 0xae, 0x04, 0xb3, 0xd9, 0x11, 0x01, 0xc5, 0x53,
    ]
    static let chunkPrefixed = Chunk(
        transferID: transferID, fileIndex: 0, offset: 65_536, rawLength: 36, codec: .zstdPrefixed,
        sha256: prefixedDigest, data: prefixedData[...])

    static let chunkAck = ChunkAck(transferID: transferID, fileIndex: 0, offset: 0, status: .stored)

    /// SHA-256 of "hello\n": its one chunk digest (at any chunk size).
    static let helloChunkDigest: [UInt8] = [
        0x58, 0x91, 0xb5, 0xb5, 0x22, 0xd5, 0xdf, 0x08, 0x6d, 0x0f, 0xf0, 0xb1, 0x10, 0xfb, 0xd9, 0xd2,
        0x1b, 0xb4, 0xfc, 0x71, 0x63, 0xaf, 0x34, 0xd0, 0x82, 0x86, 0xa2, 0xe8, 0x46, 0xf6, 0xbe, 0x03,
    ]

    /// The file digest of "hello\n" (PROTOCOL.md 11.7): SHA-256 of `helloChunkDigest`, as Python's hashlib computed
    /// it (`ecb65bb9...3e2438cc`).
    static let helloFileDigest: [UInt8] = [
        0xec, 0xb6, 0x5b, 0xb9, 0x8f, 0x9d, 0x90, 0x5b, 0x70, 0x45, 0x89, 0x86, 0xc3, 0x9f, 0xcb, 0xad,
        0x77, 0x15, 0xe5, 0xf2, 0xfc, 0xc3, 0xb1, 0xf0, 0x77, 0x67, 0xd7, 0xc8, 0x3e, 0x24, 0x38, 0xcc,
    ]

    static let fileEnd = FileEnd(transferID: transferID, fileIndex: 1, digest: helloFileDigest)
    static let fileResult = FileResult(transferID: transferID, fileIndex: 0, status: .published, detail: photoPath)
    static let cancel = TransferCancel(transferID: transferID, reason: .cancelledByUser, detail: "stopped by the user")

    // The swarm vectors (PROTOCOL.md 11.11).

    static let swarmID = SwarmID(bytes: Array(0x20...0x2f))!

    static let swarm = Swarm(
        swarmID: swarmID,
        members: [
            SwarmMember(deviceID: DeviceID(bytes: Array(0x00...0x1f))!, address: "10.0.0.1:41971"),
            SwarmMember(deviceID: DeviceID(bytes: Array(0x20...0x3f))!, address: "[fe80::2%eth0]:41971"),
            SwarmMember(deviceID: DeviceID(bytes: Array(0x40...0x5f))!, address: ""),
        ])

    /// The offer with a folders section (PROTOCOL.md 11.3): flag `replaces` and two folders.
    static let offerWithFolders: Offer = {
        var withFolders = TransferSamples.offer
        withFolders.folders = ["photos/empty", "photos/2026/Zo\u{eb}"]
        withFolders.flags = .replaces
        return withFolders
    }()

    /// The offer with a digests section (PROTOCOL.md 11.3): file 0's digest, that of `hello\n` as a sample value.
    static let offerWithDigests: Offer = {
        var withDigests = TransferSamples.offer
        withDigests.fileDigests = [0: FileDigest.of(Array("hello\n".utf8), chunkSize: 1_048_576)]
        return withDigests
    }()

    static let offerWithSwarm: Offer = {
        var withSwarm = TransferSamples.offer
        withSwarm.swarm = swarm
        return withSwarm
    }()

    static let offerReplyWithRelay = OfferReply.accepting(
        transferID, codecs: .zlib, files: [.accept(from: 0), .skip], relay: true)

    static let chunkAckFromPeer = ChunkAck(
        transferID: transferID, fileIndex: 0, offset: 3 * 1_048_576, status: .storedFromPeer)

    static let swarmMembers = SwarmMembers(transferID: transferID, members: [0, 2])

    static let chunkDigests = ChunkDigests(
        transferID: transferID, fileIndex: 0, firstChunk: 4,
        entries: [
            ChunkDigests.Entry(seed: 2, sha256: chunkDigest),
            ChunkDigests.Entry(seed: ChunkDigests.noSeed, sha256: helloChunkDigest),
        ])

    static let swarmHave = SwarmHave(swarmID: swarmID, fileIndex: 0, ranges: [0..<4, 6..<7])
    static let swarmRequest = SwarmRequest(swarmID: swarmID, fileIndex: 0, chunkIndex: 6, codecs: .zlib)
    static let swarmRefuse = SwarmRefuse(swarmID: swarmID, fileIndex: 0, chunkIndex: 6, reason: .busy)
    static let swarmReport = SwarmReport(
        transferID: transferID, offender: 2, reason: .badChunk, fileIndex: 0, chunkIndex: 6)

    /// One fixture per transfer kind, in kind order.
    static let frameCases: [TransferFrameCase] = [
        TransferFrameCase(name: "transfer-offer", message: .offer(offer)),
        TransferFrameCase(name: "transfer-offer-reply", message: .offerReply(offerReply)),
        TransferFrameCase(name: "transfer-chunk", message: .chunk(chunk)),
        TransferFrameCase(name: "transfer-chunk-prefixed", message: .chunk(chunkPrefixed)),
        TransferFrameCase(name: "transfer-chunk-ack", message: .chunkAck(chunkAck)),
        TransferFrameCase(name: "transfer-file-end", message: .fileEnd(fileEnd)),
        TransferFrameCase(name: "transfer-file-result", message: .fileResult(fileResult)),
        TransferFrameCase(name: "transfer-cancel", message: .cancel(cancel)),
        TransferFrameCase(name: "transfer-swarm-members", message: .swarmMembers(swarmMembers)),
        TransferFrameCase(name: "transfer-chunk-digests", message: .chunkDigests(chunkDigests)),
        TransferFrameCase(name: "transfer-swarm-have", message: .swarmHave(swarmHave)),
        TransferFrameCase(name: "transfer-swarm-request", message: .swarmRequest(swarmRequest)),
        TransferFrameCase(name: "transfer-swarm-refuse", message: .swarmRefuse(swarmRefuse)),
        TransferFrameCase(name: "transfer-swarm-report", message: .swarmReport(swarmReport)),
    ]

    /// The swarm's optional trailing parts of older kinds: each fixture is an older one plus its new part, and
    /// `oldLength` is the payload length of the older layout (which still decodes, without the part).
    static let optionalPartCases: [(golden: TransferFrameCase, oldLength: Int, withoutPart: TransferMessage)] = [
        (TransferFrameCase(name: "transfer-offer-swarm", message: .offer(offerWithSwarm)), 125, .offer(offer)),
        (
            TransferFrameCase(name: "transfer-offer-reply-relay", message: .offerReply(offerReplyWithRelay)), 42,
            .offerReply(offerReply)
        ),
    ]

    /// Every fixture: one per kind, the swarm variants of older kinds, and the storedFromPeer acknowledgement.
    static let allFrameCases: [TransferFrameCase] =
        frameCases + optionalPartCases.map(\.golden) + [
            TransferFrameCase(name: "transfer-chunk-ack-peer", message: .chunkAck(chunkAckFromPeer)),
            TransferFrameCase(name: "transfer-offer-digests", message: .offer(offerWithDigests)),
            TransferFrameCase(name: "transfer-offer-folders", message: .offer(offerWithFolders)),
        ]
}

/// One golden transfer frame fixture and the message it decodes to.
struct TransferFrameCase: Sendable, CustomStringConvertible {
    var name: String
    var message: TransferMessage

    var description: String { name }

    func bytes() throws -> [UInt8] {
        try Fixtures.bytes(name)
    }

    /// The fixture without its 6-byte frame header.
    func payload() throws -> [UInt8] {
        Array(try bytes().dropFirst(Frame.headerLength))
    }
}
