import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A member announces only the relayed chunks it stored (PROTOCOL.md 11.11 rule 4): a chunk it announced and cannot
/// serve would be served as whatever its staged file holds there, and the member that asked would cut this honest
/// one off as a bad relayer. Alice is the member under test; bob, the other member, is played frame by frame on his
/// swarm link to her, and sam, the sender, on his link to her. Every file is one chunk, seeded to bob.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SwarmMemberStoreTests {
    static let chunk = Limits.minChunkSize

    /// Alice's surroundings, once she accepted the offer and bob's swarm link to her is up.
    struct Scene {
        let alice: Session
        let bob: Session
        /// Sam's link to alice.
        let sam: HostileSender
        /// Bob's swarm link to alice.
        let bobLink: HostileSender
        let swarmID: SwarmID
        let offer: Offer
        let files: [[UInt8]]

        /// Bob announces chunk 0 of `file`.
        func announce(_ file: Int) async throws {
            try await bobLink.send(.swarmHave(SwarmHave(swarmID: swarmID, fileIndex: UInt32(file), ranges: [0..<1])))
        }

        /// Bob sends chunk 0 of `file`, its true bytes, as a relayed chunk.
        func relay(_ file: Int) async throws {
            let raw = files[file]
            let header = Chunk.frameHeader(
                transferID: swarmID.transferID, fileIndex: UInt32(file), offset: 0, rawLength: UInt32(raw.count),
                codec: .none, sha256: FileDigest.chunkDigest(raw), dataLength: raw.count)
            try await bob.sendTransferFrame([header, raw], to: bobLink.receiver)
        }

        /// What alice sends bob until `last` matches one (included), in order.
        func bobReads(until last: (TransferMessage) -> Bool) async -> [TransferMessage] {
            var seen: [TransferMessage] = []
            while let message = await bobLink.next() {
                seen.append(message)
                if last(message) { break }
            }
            return seen
        }

        /// Bob asks alice for chunk 0 of `file`: her answer.
        func bobAsks(for file: Int) async throws -> TransferMessage? {
            let request = SwarmRequest(swarmID: swarmID, fileIndex: UInt32(file), chunkIndex: 0, codecs: [])
            try await bobLink.send(.swarmRequest(request))
            return await bobLink.waitFor { message -> TransferMessage? in
                switch message {
                case .swarmRefuse, .chunk: message
                default: nil
                }
            }
        }

        /// Sam ends `file` and returns alice's result for it.
        func end(_ file: Int) async throws -> FileResult? {
            try await sam.sendEnd(file: UInt32(file), of: files[file], chunkSize: SwarmMemberStoreTests.chunk)
            return await sam.result()
        }
    }

    /// Runs `body` with alice (a receiving engine into `inbox`) accepting sam's offer of `fileCount` files with a
    /// swarm of alice and bob: the list and every digest (seed bob) sent, bob's link to alice up.
    static func withScene(
        fileCount: Int, seed: UInt64, _ body: @escaping @Sendable (Scene, String) async throws -> Void
    ) async throws {
        let files = (0..<fileCount).map { TestFiles.randomBytes(count: chunk, seed: seed + UInt64($0)) }
        try await SwarmMemberTests.withSessions(["alice", "bob", "sam"], inbox: "swarm-store") { sessions, inbox in
            let (alice, bob, sam) = (sessions[0], sessions[1], sessions[2])
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: alice, configuration: config) { _ in
                let port = await alice.listenPort
                let toAlice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let samLink = HostileSender(session: sam, receiver: toAlice.peerID)
                let swarmID = SwarmID.random()
                let offer = Offer(
                    transferID: samLink.transferID, chunkSize: UInt32(chunk), codecs: [],
                    files: files.indices.map { index in
                        OfferedFile(
                            path: "file\(index).bin", size: UInt64(chunk),
                            modificationTime: FileTime(seconds: 0, nanoseconds: 0))
                    },
                    swarm: Swarm(
                        swarmID: swarmID,
                        members: [
                            SwarmMember(
                                deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(port)"),
                            SwarmMember(deviceID: bob.configuration.deviceID, address: ""),
                        ]))
                try await samLink.send(.offer(offer))
                #expect(try #require(await samLink.reply()).relay)
                try await samLink.send(
                    .swarmMembers(SwarmMembers(transferID: samLink.transferID, members: [0, 1])))
                for (index, data) in files.enumerated() {
                    let entry = ChunkDigests.Entry(seed: 1, sha256: FileDigest.chunkDigest(data))
                    try await samLink.send(
                        .chunkDigests(
                            ChunkDigests(
                                transferID: samLink.transferID, fileIndex: UInt32(index), firstChunk: 0,
                                entries: [entry])))
                }
                _ = await bob.vouch(for: [alice.configuration.deviceID], reason: "test")
                let link = try await bob.connect(
                    toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: port),
                    timeout: .seconds(30))
                let scene = Scene(
                    alice: alice, bob: bob, sam: samLink,
                    bobLink: HostileSender(session: bob, receiver: link.peerID), swarmID: swarmID,
                    offer: offer, files: files)
                try await body(scene, inbox.path)
            }
        }
    }

    /// Whether `message` is about a chunk of `file` (an announcement, a request, a chunk).
    static func concerns(_ message: TransferMessage, file: Int) -> Bool {
        switch message {
        case .swarmHave(let have): have.fileIndex == UInt32(file)
        case .swarmRequest(let request): request.fileIndex == UInt32(file)
        case .chunk(let chunk): chunk.fileIndex == UInt32(file)
        default: false
        }
    }

    /// Another receiver into the same directory holds file 0's staged data, so alice cannot open it to store the
    /// chunk bob relays: the file fails as a write of the sender's chunk would (`writeFailed`, saying why), and the
    /// chunk is not announced, nor served when bob asks for it. File 1 is stored, announced and published.
    @Test func aRelayedChunkThatCouldNotBeStoredIsNotAnnouncedAndFailsItsFile() async throws {
        try await Self.withScene(fileCount: 2, seed: 71) { scene, inbox in
            let other = try ReceiveDirectory(path: inbox)
            defer { other.close() }
            let key = ResumeKey.make(
                sender: scene.sam.session.configuration.deviceID, file: scene.offer.files[0],
                chunkSize: UInt32(Self.chunk))
            let theirs = try #require(try other.reserveStaged(key: key))
            defer { theirs.release() }
            #expect(try theirs.lockAcrossProcesses(), "the other receiver holds file 0's staged data")

            for file in 0..<2 { try await scene.announce(file) }
            var requested: [UInt32] = []
            while requested.count < 2,
                let request = await scene.bobLink.waitFor({ message -> SwarmRequest? in
                    if case .swarmRequest(let request) = message { request } else { nil }
                })
            {
                requested.append(request.fileIndex)
            }
            #expect(requested.sorted() == [0, 1], "alice asked bob for both chunks")
            for file in 0..<2 { try await scene.relay(file) }
            let seen = await scene.bobReads { message in
                if case .swarmHave(let have) = message { have.fileIndex == 1 } else { false }
            }
            #expect(!seen.contains { Self.concerns($0, file: 0) }, "nothing of file 0 after bob relayed it: \(seen)")
            let answer = try await scene.bobAsks(for: 0)
            guard case .swarmRefuse(let refuse)? = answer else {
                Issue.record("alice did not refuse a chunk she could not store: \(String(describing: answer))")
                return
            }
            #expect(refuse.reason == .notHeld)

            let failed = try #require(await scene.sam.result())
            #expect(failed.fileIndex == 0 && failed.status == .writeFailed, "\(failed)")
            #expect(failed.detail.contains("another transfer"), "the reason, for a person: \(failed.detail)")
            let ack = try #require(await scene.sam.ack())
            #expect(ack.fileIndex == 1 && ack.status == .storedFromPeer, "\(ack)")
            let published = try #require(try await scene.end(1))
            #expect(published.fileIndex == 1 && published.status == .published, "\(published)")
        }
    }

    /// The sender gives file 0 up (its source changed) while alice's request for it is out: bob's answer is dropped,
    /// not stored, not announced, not asked for again, and not served; bob is not cut off for sending it. File 1,
    /// announced after, is still fetched and published.
    @Test func aChunkOfAFileThatEndedHereIsNeitherStoredNorAskedForAgain() async throws {
        try await Self.withScene(fileCount: 2, seed: 81) { scene, _ in
            try await scene.announce(0)
            let asked = await scene.bobReads { if case .swarmRequest = $0 { true } else { false } }
            #expect(asked.last.map { Self.concerns($0, file: 0) } == true, "alice asked bob for file 0: \(asked)")
            try await scene.sam.send(
                .fileResult(
                    FileResult(transferID: scene.sam.transferID, fileIndex: 0, status: .sourceChanged, detail: "")))
            let failed = try #require(await scene.sam.result())
            #expect(failed.fileIndex == 0 && failed.status == .sourceChanged, "\(failed)")

            try await scene.relay(0)  // the late answer
            try await scene.announce(1)
            var seen = await scene.bobReads { if case .swarmRequest = $0 { true } else { false } }
            try await scene.relay(1)
            seen += await scene.bobReads { message in
                if case .swarmHave(let have) = message { have.fileIndex == 1 } else { false }
            }
            #expect(!seen.contains { Self.concerns($0, file: 0) }, "nothing of file 0 once it ended: \(seen)")
            #expect(seen.contains { Self.concerns($0, file: 1) }, "file 1 was fetched and announced: \(seen)")
            let answer = try await scene.bobAsks(for: 0)
            // An answer at all: alice still talks to bob (a member cut off has its swarm link closed).
            guard case .swarmRefuse(let refuse)? = answer else {
                Issue.record("alice did not refuse a chunk of a file that ended: \(String(describing: answer))")
                return
            }
            #expect(refuse.reason == .notHeld)

            let ack = try #require(await scene.sam.ack())
            #expect(ack.fileIndex == 1 && ack.status == .storedFromPeer, "\(ack)")
            let published = try #require(try await scene.end(1))
            #expect(published.fileIndex == 1 && published.status == .published, "\(published)")
        }
    }
}
