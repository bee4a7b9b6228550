import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The review of issue 28, point 1 ("already there"): what the receiver hashes for a sender is bounded per peer over
/// time (not per offer), both spellings of a name count against it, a held file's end reports the digest verified,
/// and a held file changed after the reply is not reported identical.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AlreadyThereBoundsTests {
    static let chunk = DigestCacheTests.chunk

    /// A sender driven by hand (alice's session, no engine) and a receiving engine into `inbox`.
    static func withHandDrivenSender(
        inbox: String, hashLimit: UInt64 = 16 << 30,
        _ body: (_ receiver: TransferEngine, _ alice: Session, _ bob: PeerID) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let configuration = TransferEngineTests.configuration
        try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                var receiving = TransferConfiguration(receiveDirectory: inbox, offerPolicy: .all, chunkSize: Self.chunk)
                receiving.alreadyThereHashLimit = hashLimit
                try await TransferEngine.run(session: bob, configuration: receiving) { receiver in
                    let info = try await alice.connect(
                        toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                    try await body(receiver, alice, info.peerID)
                }
            }
        }
    }

    static func offer(_ id: TransferID, _ name: String, size: Int, digest: [UInt8]) -> Offer {
        Offer(
            transferID: id, chunkSize: UInt32(Self.chunk), codecs: [],
            files: [
                OfferedFile(
                    path: name, size: UInt64(size), permissions: 0o644,
                    modificationTime: FileTime(seconds: 1_767_225_600, nanoseconds: 0))
            ], fileDigests: [0: digest])
    }

    /// The next reply to `id` that alice gets (offer reply or file result).
    static func next(_ alice: Session, _ id: TransferID) async throws -> TransferMessage? {
        for await event in alice.transferEvents {
            guard case .frame(let frame, _) = event else { continue }
            let message = try TransferMessage(frame: frame)
            switch message {
            case .offerReply(let reply) where reply.transferID == id: return message
            case .fileResult(let result) where result.transferID == id: return message
            default: continue
            }
        }
        return nil
    }

    static func send(_ message: TransferMessage, _ alice: Session, to bob: PeerID) async throws {
        _ = try await alice.sendTransferFrame([message.frame.encoded()], to: bob)
    }

    static func resumeOffsets(_ message: TransferMessage?) -> [UInt64]? {
        guard case .offerReply(let reply) = message else { return nil }
        return reply.files.map(\.resumeOffset)
    }

    /// The budget is the peer's over time: a second offer of the same held file right after the first is not hashed
    /// again (each offer hashed up to the limit before, so a sender could make the receiver re-read it forever).
    @Test func theHashingBudgetIsThePeersNotTheOffers() async throws {
        try await TemporaryDirectory.with(prefix: "bound-in") { inbox in
            let size = 4 * Self.chunk
            let held = try TestFiles(in: inbox).random("held.bin", size: size, seed: 61)
            let digest = FileDigest.of([UInt8](try Data(contentsOf: held)), chunkSize: Self.chunk)
            try await Self.withHandDrivenSender(inbox: inbox.path, hashLimit: UInt64(size)) { _, alice, bob in
                let first = TransferID.random()
                try await Self.send(.offer(Self.offer(first, "held.bin", size: size, digest: digest)), alice, to: bob)
                #expect(Self.resumeOffsets(try await Self.next(alice, first)) == [UInt64(size)])
                try await Self.send(.fileEnd(FileEnd(transferID: first, fileIndex: 0, digest: digest)), alice, to: bob)
                guard case .fileResult(let result) = try await Self.next(alice, first) else {
                    Issue.record("no file result")
                    return
                }
                #expect(result.identical)
                let second = TransferID.random()
                try await Self.send(.offer(Self.offer(second, "held.bin", size: size, digest: digest)), alice, to: bob)
                #expect(Self.resumeOffsets(try await Self.next(alice, second)) == [0], "the budget was spent")
            }
        }
    }

    /// Both spellings of a name (NFC, NFD) count: with a budget of one file, the second spelling is not hashed.
    @Test func bothSpellingsOfANameCountAgainstTheBudget() async throws {
        try await TemporaryDirectory.with(prefix: "bound-in") { inbox in
            let size = 4 * Self.chunk
            let composed = "caf\u{E9}.bin"
            let decomposed = "cafe\u{301}.bin"
            let files = TestFiles(in: inbox)
            _ = try files.random(composed, size: size, seed: 71)  // other bytes under the offered spelling
            let twin = try files.random(decomposed, size: size, seed: 72)
            let digest = FileDigest.of([UInt8](try Data(contentsOf: twin)), chunkSize: Self.chunk)
            try await Self.withHandDrivenSender(inbox: inbox.path, hashLimit: UInt64(size)) { _, alice, bob in
                let id = TransferID.random()
                try await Self.send(.offer(Self.offer(id, composed, size: size, digest: digest)), alice, to: bob)
                #expect(Self.resumeOffsets(try await Self.next(alice, id)) == [0], "one file's budget hashed two")
            }
        }
    }

    /// The receiver's `fileFinished` for a held file carries the digest verified (docs/EVENTS.md), not null.
    @Test func aHeldFilesEndReportsTheVerifiedDigest() async throws {
        try await TemporaryDirectory.with(prefix: "bound-in") { inbox in
            let size = 4 * Self.chunk + 3
            let held = try TestFiles(in: inbox).random("held.bin", size: size, seed: 81)
            let digest = FileDigest.of([UInt8](try Data(contentsOf: held)), chunkSize: Self.chunk)
            try await Self.withHandDrivenSender(inbox: inbox.path) { receiver, alice, bob in
                let id = TransferID.random()
                try await Self.send(.offer(Self.offer(id, "held.bin", size: size, digest: digest)), alice, to: bob)
                #expect(Self.resumeOffsets(try await Self.next(alice, id)) == [UInt64(size)])
                try await Self.send(.fileEnd(FileEnd(transferID: id, fileIndex: 0, digest: digest)), alice, to: bob)
                for await event in receiver.events {
                    guard case .fileFinished(let outcome) = event else { continue }
                    #expect(outcome.alreadyThere && outcome.digest == digest, "\(outcome)")
                    break
                }
            }
        }
    }

    /// A held file replaced between the reply and the `fileEnd` is no longer the file found identical: the file
    /// fails (the sender reports it and sends it again next time), and is not reported identical.
    @Test func aHeldFileChangedBeforeItsEndIsNotReportedIdentical() async throws {
        try await TemporaryDirectory.with(prefix: "bound-in") { inbox in
            let size = 4 * Self.chunk
            let files = TestFiles(in: inbox)
            let held = try files.random("held.bin", size: size, seed: 91)
            let digest = FileDigest.of([UInt8](try Data(contentsOf: held)), chunkSize: Self.chunk)
            try await Self.withHandDrivenSender(inbox: inbox.path) { _, alice, bob in
                let id = TransferID.random()
                try await Self.send(.offer(Self.offer(id, "held.bin", size: size, digest: digest)), alice, to: bob)
                #expect(Self.resumeOffsets(try await Self.next(alice, id)) == [UInt64(size)])
                // Saved over by another program (a new file renamed into its place), the same size, other bytes.
                let other = try files.random(".new.bin", size: size, seed: 92)
                #expect(rename(other.path, held.path) == 0)
                try await Self.send(.fileEnd(FileEnd(transferID: id, fileIndex: 0, digest: digest)), alice, to: bob)
                guard case .fileResult(let result) = try await Self.next(alice, id) else {
                    Issue.record("no file result")
                    return
                }
                #expect(!result.identical && result.status != .published, "\(result)")
            }
        }
    }

    /// Hashing a held file stops between chunks once its flag says the sender left (or cancelled).
    @Test func hashingAHeldFileStopsWhenItsFlagIsSet() async throws {
        try await TemporaryDirectory.with(prefix: "bound-in") { inbox in
            let size = 8 * Self.chunk
            let held = try TestFiles(in: inbox).random("held.bin", size: size, seed: 95)
            let digest = FileDigest.of([UInt8](try Data(contentsOf: held)), chunkSize: Self.chunk)
            let directory = try ReceiveDirectory(path: inbox.path)
            let stop = HashStop()
            #expect(
                directory.alreadyHolds(["held.bin"], size: UInt64(size), digest: digest, chunkSize: Self.chunk)?.name
                    == "held.bin")
            stop.set()
            #expect(
                directory.alreadyHolds(
                    ["held.bin"], size: UInt64(size), digest: digest, chunkSize: Self.chunk, stop: stop) == nil)
        }
    }
}
