import Foundation
import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerryTransfer

/// The engine in-process: two sessions on one reactor, on loopback, files on disk.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TransferEngineTests {
    static func configuration(_ name: String) -> SessionConfiguration {
        var configuration = SessionConfiguration(
            sessionID: "unit", displayName: name, mode: .peer,
            identity: TestIdentity.named(name), listenPort: 0,
            discoveryEnabled: false, acceptPolicy: .all, transfersEnabled: true)
        configuration.handshakeTimeout = TestIdentity.handshakeTimeout
        return configuration
    }

    /// Runs `body` with a receiving engine (into `inbox`) and a sending engine connected to it.
    static func withEngines(
        inbox: String, policy: OfferPolicy = .all, chunkSize: Int = Limits.defaultChunkSize,
        compression: CompressionMode = .auto, digestCache: DigestCache? = nil,
        _ body: (_ receiver: TransferEngine, _ sender: TransferEngine, _ receiverID: PeerID) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                let receiving = TransferConfiguration(receiveDirectory: inbox, offerPolicy: policy, chunkSize: chunkSize)
                var sending = TransferConfiguration(chunkSize: chunkSize, compression: compression)
                sending.digestCache = digestCache
                try await TransferEngine.run(session: bob, configuration: receiving) { receiver in
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let info = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        try await body(receiver, sender, info.peerID)
                    }
                }
            }
        }
    }

    @Test func filesOfEverySizeArriveVerified() async throws {
        try await TemporaryDirectory.with(prefix: "engine-src") { source in
            try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
                let files = TestFiles(in: source)
                let sizes = [0, 1, 65_535, 65_536, 65_537, 300_000]
                var sources: [SourceFile] = []
                for (index, size) in sizes.enumerated() {
                    let url = try files.random("f\(index).bin", size: size, seed: UInt64(index + 1))
                    sources.append(SourceFile(path: url.path, name: "dir/f\(index).bin"))
                }
                let text = try files.text("t.txt", size: 400_000)
                sources.append(SourceFile(path: text.path, name: "t.txt"))
                // zlib on every chunk: `auto` decides by the measured link and the chunks before (random ones turn
                // it off for a while), so whether the text was compressed would depend on the machine's load.
                // CompressionPolicyTests prove `auto` with an injected clock.
                try await Self.withEngines(inbox: inbox.path, chunkSize: 65_536, compression: .zlib) { _, sender, bob in
                    let outcomes = try await sender.send(sources, to: [bob])
                    #expect(outcomes.count == 1)
                    let outcome = try #require(outcomes.first)
                    #expect(outcome.isSuccess, "\(outcome)")
                    #expect(outcome.filesSucceeded == sources.count)
                    #expect(outcome.wireBytes < outcome.bytes, "text is compressed")
                }
                for source in sources {
                    let received = try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/" + source.name))
                    #expect(received == (try Data(contentsOf: URL(fileURLWithPath: source.path))), "\(source.name)")
                }
            }
        }
    }

    @Test func aDeniedOfferReportsTheReason() async throws {
        try await TemporaryDirectory.with(prefix: "engine-src") { source in
            try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
                let url = try TestFiles(in: source).random("x.bin", size: 10)
                try await Self.withEngines(inbox: inbox.path, policy: .none) { _, sender, bob in
                    let outcome = try #require(try await sender.send([SourceFile(path: url.path, name: "x.bin")], to: [bob]).first)
                    #expect(!outcome.isSuccess)
                    #expect(outcome.failure?.contains("denied") == true, "\(outcome)")
                }
                #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path).filter { !$0.hasPrefix(".") }.isEmpty)
            }
        }
    }

    @Test func anAskedOfferWaitsForTheAnswer() async throws {
        try await TemporaryDirectory.with(prefix: "engine-src") { source in
            try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
                let url = try TestFiles(in: source).jpeg("p.jpg", width: 32, height: 16)
                try await Self.withEngines(inbox: inbox.path, policy: .ask) { receiver, sender, bob in
                    async let outcomes = sender.send([SourceFile(path: url.path, name: "p.jpg")], to: [bob])
                    var offer: IncomingOffer?
                    for await event in receiver.events {
                        if case .offerReceived(let incoming) = event {
                            offer = incoming
                            break
                        }
                    }
                    let asked = try #require(offer)
                    #expect(asked.files.map(\.path) == ["p.jpg"])
                    #expect(asked.files.first?.pixelWidth == 32 && asked.files.first?.pixelHeight == 16)
                    #expect(asked.files.first?.mediaType == "image/jpeg")
                    await receiver.respond(to: asked.transferID, from: asked.peer.peerID, accept: true)
                    let outcome = try #require(try await outcomes.first)
                    #expect(outcome.isSuccess, "\(outcome)")
                }
                #expect(FileManager.default.fileExists(atPath: inbox.path + "/p.jpg"))
            }
        }
    }
}

/// A peer that breaks the transfer protocol, driven frame by frame through a bare session.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TransferHostilePeerTests {
    /// Runs `body` with "mallory", a session without an engine, connected to a receiving engine on `inbox`.
    static func withMallory(
        inbox: String, _ body: (_ mallory: Session, _ receiver: PeerID) async throws -> Void
    ) async throws {
        try await withMallory(inbox: inbox, policy: .all) { mallory, bob, _ in try await body(mallory, bob) }
    }

    /// Runs `body` with "mallory" connected to a receiving engine on `inbox` that answers offers by `policy`; the
    /// engine is handed over too, so that a test can read what it did.
    static func withMallory(
        inbox: String, policy: OfferPolicy,
        _ body: (_ mallory: Session, _ receiver: PeerID, _ engine: TransferEngine) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: TransferEngineTests.configuration("mallory"), reactor: reactor) {
                mallory in
                let receiving = TransferConfiguration(receiveDirectory: inbox, offerPolicy: policy)
                try await TransferEngine.run(session: bob, configuration: receiving) { engine in
                    let info = try await mallory.connect(
                        toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                    try await body(mallory, info.peerID, engine)
                }
            }
        }
    }

    @Test func aChunkBeforeAnyOfferClosesTheLinkAndWritesNothing() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await Self.withMallory(inbox: inbox.path) { mallory, bob in
                let data: [UInt8] = Array("../../etc/passwd".utf8)
                let header = Chunk.frameHeader(
                    transferID: TransferID.random(), fileIndex: 0, offset: 0, rawLength: UInt32(data.count),
                    codec: .none, sha256: FileDigest.chunkDigest(data), dataLength: data.count)
                try await mallory.sendTransferFrame([header, data], to: bob)
                for await event in mallory.transferEvents {
                    if case .peerDisconnected(let peer, _) = event, peer == bob { break }
                }
            }
            let entries = try FileManager.default.contentsOfDirectory(atPath: inbox.path)
            #expect(entries.filter { $0 != ".ferry-staging" }.isEmpty, "\(entries)")
            let staged = try FileManager.default.contentsOfDirectory(atPath: inbox.path + "/.ferry-staging")
            #expect(staged.isEmpty, "\(staged)")
        }
    }

    @Test func anOfferWithAnEscapingNameIsDeniedAndNothingIsWritten() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await Self.withMallory(inbox: inbox.path) { mallory, bob in
                for name in ["../escape.txt", "/etc/cron.d/x", "a/../../b", "ok/\u{202E}gpj.exe"] {
                    let offer = Offer(
                        transferID: TransferID.random(), chunkSize: UInt32(Limits.defaultChunkSize), codecs: [.zlib],
                        files: [
                            OfferedFile(
                                path: name, size: 4, permissions: 0o644,
                                modificationTime: FileTime(seconds: 0, nanoseconds: 0), mediaType: "", pixelWidth: 0,
                                pixelHeight: 0)
                        ])
                    try await mallory.sendTransferFrame([TransferMessage.offer(offer).frame.encoded()], to: bob)
                    var reply: OfferReply?
                    for await event in mallory.transferEvents {
                        if case .frame(let frame, _) = event, case .offerReply(let answer)? = try? TransferMessage(frame: frame) {
                            reply = answer
                            break
                        }
                    }
                    #expect(reply?.accepted == false, "\(name)")
                    #expect(reply?.reason == .invalidOffer, "\(name)")
                }
            }
            let entries = try FileManager.default.contentsOfDirectory(atPath: inbox.path)
            #expect(entries.filter { $0 != ".ferry-staging" }.isEmpty, "\(entries)")
            #expect(!FileManager.default.fileExists(atPath: inbox.path + "/../escape.txt"))
        }
    }

    @Test func sizesThatOverflowWhenAddedAreDeniedNotATrap() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await Self.withMallory(inbox: inbox.path) { mallory, bob in
                let huge = OfferedFile(
                    path: "a", size: 1 << 63, permissions: 0o644, modificationTime: FileTime(seconds: 0, nanoseconds: 0),
                    mediaType: "", pixelWidth: 0, pixelHeight: 0)
                var other = huge
                other.path = "b"
                let offer = Offer(
                    transferID: TransferID.random(), chunkSize: UInt32(Limits.defaultChunkSize), codecs: [.zlib],
                    files: [huge, other])
                try await mallory.sendTransferFrame([TransferMessage.offer(offer).frame.encoded()], to: bob)
                for await event in mallory.transferEvents {
                    if case .frame(let frame, _) = event, case .offerReply(let reply)? = try? TransferMessage(frame: frame) {
                        #expect(!reply.accepted && reply.reason == .invalidOffer)
                        break
                    }
                }
            }
        }
    }
}
