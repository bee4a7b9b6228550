import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The file digest check before publishing (promise 2 of docs/SECURITY.md section 5), against a sender that lies: its
/// fileEnd digest, a chunk's data (with a chunk digest that matches the lie) or the staged prefix a resume builds on
/// is wrong. Each test watches the receive directory with inotify while it runs and requires that no name ever
/// appears in it, that the file's result names the mismatch, and that the staged data is discarded (PROTOCOL.md
/// 11.10 rule 5), so that the next offer of the same file starts from its first byte.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DigestCheckTests {
    static let chunk = Limits.minChunkSize

    /// `count` bytes of a seeded mix (SplitMix64's finaliser over the position), different in every chunk.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        (0..<count).map { index in
            var z = UInt64(index) &+ seed << 40
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
    }

    /// Runs `body` with a hostile sender connected to a receiving engine on a fresh inbox, and the inotify events of
    /// the inbox from before the first offer to the end, the recorder's own stop file left out.
    static func withLiar(
        _ body: (_ mallory: Session, _ receiver: PeerID, _ inbox: String) async throws -> Void
    ) async throws -> [InotifyRecorder.Event] {
        var events: [InotifyRecorder.Event] = []
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            let recorder = try InotifyRecorder(directory: inbox.path)
            do {
                try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, _ in
                    try await body(mallory, bob, inbox.path)
                }
            } catch {
                _ = recorder.stop()
                throw error
            }
            events = recorder.stop().filter { $0.name != InotifyRecorder.stopName }
        }
        return events
    }

    /// Nothing but the staging folder ever appeared in the inbox.
    static func expectNothingAppeared(
        _ events: [InotifyRecorder.Event], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let visible = events.filter { $0.name != ".ferry-staging" }
        #expect(visible.isEmpty, "names seen in the inbox: \(visible)", sourceLocation: sourceLocation)
    }

    static func staged(in inbox: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: inbox + "/.ferry-staging")
    }

    /// Expects the result of file 0 to name the digest mismatch.
    static func expectMismatch(_ result: FileResult?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result?.status == .hashMismatch, "\(String(describing: result))", sourceLocation: sourceLocation)
        #expect(
            result?.detail.contains("digest") == true, "\(String(describing: result))", sourceLocation: sourceLocation)
    }

    /// Sends `data` as one file in chunks, each acknowledged `stored`, then a fileEnd with the digest of `digestOf`.
    static func send(_ data: [UInt8], claiming digestOf: [UInt8], from offset: Int = 0, by sender: HostileSender)
        async throws
    {
        for start in stride(from: offset, to: data.count, by: chunk) {
            let piece = Array(data[start..<min(start + chunk, data.count)])
            try await sender.sendChunk(file: 0, offset: UInt64(start), raw: piece)
            #expect(try #require(await sender.ack()).status == .stored)
        }
        try await sender.sendEnd(file: 0, of: digestOf)
    }

    @Test func aWrongDigestInFileEndPublishesNothingAndDiscardsTheStagedData() async throws {
        let data = Self.bytes(3 * Self.chunk + 100, seed: 1)
        let events = try await Self.withLiar { mallory, bob, inbox in
            let sender = HostileSender(session: mallory, receiver: bob)
            try await sender.send(.offer(sender.offer([("report.pdf", UInt64(data.count))])))
            #expect(try #require(await sender.reply()).accepted)
            var claimed = data
            claimed[0] ^= 1
            try await Self.send(data, claiming: claimed, by: sender)
            Self.expectMismatch(await sender.result())
            #expect(try Self.staged(in: inbox).isEmpty, "the staged data is discarded")
        }
        Self.expectNothingAppeared(events)
    }

    /// A chunk whose bytes are not the file's, with a chunk digest computed over those bytes: the chunk check cannot
    /// catch it, it is stored and acknowledged, and only the file digest (over the digests of the file's true
    /// chunks, PROTOCOL.md 11.7) stops it.
    @Test func aLyingChunkWithAMatchingChunkDigestIsStoppedByTheFileDigest() async throws {
        let data = Self.bytes(3 * Self.chunk, seed: 2)
        let events = try await Self.withLiar { mallory, bob, inbox in
            let sender = HostileSender(session: mallory, receiver: bob)
            try await sender.send(.offer(sender.offer([("photo.jpg", UInt64(data.count))])))
            #expect(try #require(await sender.reply()).accepted)
            var lie = data
            lie[Self.chunk + 7] ^= 0x80  // the second chunk, sent with the SHA-256 of these bytes
            try await Self.send(lie, claiming: data, by: sender)
            Self.expectMismatch(await sender.result())
            #expect(try Self.staged(in: inbox).isEmpty, "the staged data is discarded")
        }
        Self.expectNothingAppeared(events)
    }

    /// A transfer stops after two chunks (the sender cancels; the staged data stays for a resume). Then the staged
    /// bytes are changed on disk, and the same file is offered again: the receiver resumes from the staged prefix,
    /// hashes what is on disk, and the honest rest does not make it verify. The staged data is discarded, so the
    /// third offer starts from 0 and the file arrives intact.
    @Test func aCorruptResumedPrefixIsStoppedByTheDigestAndTheNextOfferStartsOver() async throws {
        let data = Self.bytes(3 * Self.chunk + 1000, seed: 3)
        let name = "video.mp4"
        var published: [UInt8] = []
        let events = try await Self.withLiar { mallory, bob, inbox in
            let first = HostileSender(session: mallory, receiver: bob)
            try await first.send(.offer(first.offer([(name, UInt64(data.count))])))
            #expect(try #require(await first.reply()).files.first?.resumeOffset == 0)
            for start in stride(from: 0, to: 2 * Self.chunk, by: Self.chunk) {
                try await first.sendChunk(file: 0, offset: UInt64(start), raw: Array(data[start..<start + Self.chunk]))
                #expect(try #require(await first.ack()).status == .stored)
            }
            try await first.send(
                .cancel(TransferCancel(transferID: first.transferID, reason: .cancelledByUser, detail: "")))

            // One byte of the staged prefix flipped on disk, its length kept.
            let stagedNames = try Self.staged(in: inbox)
            try #require(stagedNames.count == 1, "\(stagedNames)")
            let path = inbox + "/.ferry-staging/" + stagedNames[0]
            var staged = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(staged == Array(data[0..<2 * Self.chunk]))
            staged[100] ^= 0x01
            try Data(staged).write(to: URL(fileURLWithPath: path))

            // Offered again (a new transfer of the same name, size and time): resumed from the staged prefix.
            let second = HostileSender(session: mallory, receiver: bob)
            try await second.send(.offer(second.offer([(name, UInt64(data.count))])))
            #expect(try #require(await second.reply()).files.first?.resumeOffset == UInt64(2 * Self.chunk))
            try await Self.send(data, claiming: data, from: 2 * Self.chunk, by: second)
            Self.expectMismatch(await second.result())
            #expect(try Self.staged(in: inbox).isEmpty, "the staged data is discarded")

            // Nothing left to resume from: the whole file is asked for, and arrives.
            let third = HostileSender(session: mallory, receiver: bob)
            try await third.send(.offer(third.offer([(name, UInt64(data.count))])))
            #expect(try #require(await third.reply()).files.first?.resumeOffset == 0)
            try await Self.send(data, claiming: data, by: third)
            let result = try #require(await third.result())
            #expect(result.status == .published && result.detail == name, "\(result)")
            published = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox + "/" + name)))
        }
        let intact = published == data  // not in the expectation: it would print megabytes on failure
        #expect(intact, "published \(published.count) bytes, sent \(data.count)")
        // The only name that ever appeared is the verified file of the third offer, once, complete.
        let visible = events.filter { $0.name != ".ferry-staging" }
        #expect(visible.count == 1 && visible.first?.name == name, "\(visible)")
        #expect(visible.first?.mask == UInt32(IN_MOVED_TO) && visible.first?.sizeWhenSeen == data.count, "\(visible)")
    }

    /// The same name, size and time offered again with other content: the receiver resumes from the first content's
    /// staged prefix, and the new file's digest (honest for its own bytes) does not cover that prefix.
    @Test func aResumeUnderTheSameNameWithOtherContentIsStoppedByTheDigest() async throws {
        let old = Self.bytes(3 * Self.chunk, seed: 4)
        let new = Self.bytes(3 * Self.chunk, seed: 5)
        let events = try await Self.withLiar { mallory, bob, inbox in
            let first = HostileSender(session: mallory, receiver: bob)
            try await first.send(.offer(first.offer([("notes.txt", UInt64(old.count))])))
            #expect(try #require(await first.reply()).accepted)
            for start in stride(from: 0, to: 2 * Self.chunk, by: Self.chunk) {
                try await first.sendChunk(file: 0, offset: UInt64(start), raw: Array(old[start..<start + Self.chunk]))
                #expect(try #require(await first.ack()).status == .stored)
            }
            try await first.send(
                .cancel(TransferCancel(transferID: first.transferID, reason: .cancelledByUser, detail: "")))

            let second = HostileSender(session: mallory, receiver: bob)
            try await second.send(.offer(second.offer([("notes.txt", UInt64(new.count))])))
            #expect(try #require(await second.reply()).files.first?.resumeOffset == UInt64(2 * Self.chunk))
            try await Self.send(new, claiming: new, from: 2 * Self.chunk, by: second)
            Self.expectMismatch(await second.result())
            #expect(try Self.staged(in: inbox).isEmpty, "the staged data is discarded")
        }
        Self.expectNothingAppeared(events)
    }
}
