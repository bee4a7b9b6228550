import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// Many small files (issue 11): the sender sends a file's `fileEnd` together with the chunk that completes it, and
/// still exactly once per file (PROTOCOL.md 11.10 rule 5), also when that chunk is called corrupt after its
/// `fileEnd` went and is sent again.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SmallFilesTests {
    static let chunk = Limits.minChunkSize

    @Test func eachSmallFileGetsOneFileEndEvenWhenItsChunkIsSentAgain() async throws {
        try await TemporaryDirectory.with(prefix: "small-src") { source in
            let sizes = [1000, 5000, Self.chunk, 1, 3000]
            var files: [SourceFile] = []
            var contents: [[UInt8]] = []
            for (index, size) in sizes.enumerated() {
                let url = try TestFiles(in: source).random("f\(index).bin", size: size, seed: UInt64(40 + index))
                files.append(SourceFile(path: url.path, name: "f\(index).bin"))
                contents.append(try [UInt8](Data(contentsOf: url)))
            }
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("mallory"), reactor: reactor) { mallory in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    let sending = TransferConfiguration(chunkSize: Self.chunk, compression: .none)
                    try await TransferEngine.run(session: alice, configuration: sending) { sender in
                        let link = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await mallory.listenPort), timeout: .seconds(30))
                        let expected = contents
                        let receiver = Task {
                            try await Self.receiveCallingOneChunkCorrupt(mallory, contents: expected, corruptFile: 1)
                        }
                        defer { receiver.cancel() }
                        let outcomes = try await sender.send(files, to: [link.peerID])
                        #expect(outcomes.count == 1 && outcomes.first?.filesSucceeded == sizes.count, "\(outcomes)")
                        let seen = try await receiver.value
                        #expect(seen.copiesOfCorrupt == 2, "the chunk called corrupt came again")
                        #expect(seen.fileEnds == Array(repeating: 1, count: sizes.count), "one fileEnd per file")
                        for (index, bytes) in contents.enumerated() {
                            #expect(seen.digests[index] == FileDigest.of(bytes, chunkSize: Self.chunk), "file \(index)")
                        }
                    }
                }
            }
        }
    }

    /// Sender: the frames of files sent whole in one chunk go to the session together (`SmallFileFrames`), far fewer
    /// queue entries than files, and every file still arrives whole and verified, in a send that mixes them with a
    /// file of several chunks.
    @Test func oneChunkFilesGoToTheLinkTogether() async throws {
        try await TemporaryDirectory.with(prefix: "small-src") { source in
            try await TemporaryDirectory.with(prefix: "small-in") { inbox in
                let sizes = Array(repeating: 1000, count: 30) + [3 * Self.chunk + 5] + Array(repeating: 200, count: 30)
                var files: [SourceFile] = []
                for (index, size) in sizes.enumerated() {
                    let url = try TestFiles(in: source).random("f\(index).bin", size: size, seed: UInt64(70 + index))
                    files.append(SourceFile(path: url.path, name: "f\(index).bin"))
                }
                try await TransferEngineTests.withEngines(
                    inbox: inbox.path, chunkSize: Self.chunk, compression: .none
                ) { _, sender, bob in
                    let outcomes = try await sender.send(files, to: [bob])
                    #expect(outcomes.first?.filesSucceeded == sizes.count, "\(outcomes)")
                    let entries = await sender.probe.linkEntries
                    #expect(entries <= 10, "\(entries) queue entries for \(sizes.count) files")
                }
                for (index, file) in files.enumerated() {
                    let sent = try Data(contentsOf: URL(fileURLWithPath: file.path))
                    let received = try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/f\(index).bin"))
                    #expect(sent == received, "f\(index).bin")
                }
            }
        }
    }

    /// Receiver: the acknowledgements of writes completed together go to the sender in one queue entry
    /// (`TransferEngine+HeldAcks`), and every file still gets its acknowledgement and its result.
    @Test func acknowledgementsOfWritesCompletedTogetherGoTogether() async throws {
        try await TemporaryDirectory.with(prefix: "small-src") { source in
            try await TemporaryDirectory.with(prefix: "small-in") { inbox in
                let count = 20
                var files: [SourceFile] = []
                for index in 0..<count {
                    let url = try TestFiles(in: source).random("f\(index).bin", size: 900, seed: UInt64(300 + index))
                    files.append(SourceFile(path: url.path, name: "f\(index).bin"))
                }
                try await TransferEngineTests.withEngines(
                    inbox: inbox.path, chunkSize: Self.chunk, compression: .none
                ) { receiver, sender, bob in
                    await receiver.holdCompletions()
                    let sources = files
                    let sending = Task { try await sender.send(sources, to: [bob]) }
                    // The writes complete on the receiver's I/O queue and gather in the completion channel: two
                    // completions a file, its chunk's write and the turn of its verification queued behind it.
                    let clock = ContinuousClock()
                    let deadline = clock.now + .seconds(30)
                    var gathered = 0
                    while clock.now < deadline {
                        gathered = receiver.completions.bufferedCount + (await receiver.completionLoopIsHeld ? 1 : 0)
                        if gathered >= 2 * count { break }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    #expect(gathered == 2 * count, "\(gathered) write completions gathered")
                    await receiver.releaseCompletions()
                    let outcomes = try await sending.value
                    #expect(outcomes.first?.filesSucceeded == count, "\(outcomes)")
                    let entries = await receiver.probe.ackEntries
                    #expect(entries <= 2, "\(entries) queue entries carried the \(count) acknowledgements")
                }
            }
        }
    }

    /// Receiver: the staged files of the next files are created ahead of their first chunk (off the engine actor),
    /// and those that never got a byte are removed when the transfer ends; the one with data stays for a resume.
    @Test func stagedFilesCreatedAheadGoWhenTheTransferEndsWithoutThem() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let finished = Task { () -> TransferOutcome? in
                    for await event in engine.events {
                        if case .finished(let outcome) = event { return outcome }
                    }
                    return nil
                }
                let sender = HostileSender(session: mallory, receiver: bob)
                let files = [("first.bin", UInt64(2 * Self.chunk))] + (1...40).map { ("small\($0).bin", UInt64(100)) }
                try await sender.send(.offer(sender.offer(files)))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: TestFiles.randomBytes(count: Self.chunk, seed: 7))
                #expect(try #require(await sender.ack()).status == .stored)
                let staging = inbox.path + "/.ferry-staging"
                func staged() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [] }
                // Created on another queue: waited for (with a deadline), not assumed.
                let ahead = await Self.waitUntil { staged().count == 1 + TransferEngine.stagedAhead }
                #expect(ahead, "\(staged().count) staged files")
                let cancel = TransferCancel(transferID: sender.transferID, reason: .cancelledByUser, detail: "")
                try await sender.send(.cancel(cancel))
                #expect(await finished.value != nil)
                let left = staged()
                #expect(left.count == 1, "\(left.count) staged files left")
                let size = try FileManager.default.attributesOfItem(atPath: staging + "/" + (left.first ?? ""))[.size]
                #expect((size as? NSNumber)?.intValue == Self.chunk, "the first file's staged chunk stays")
            }
        }
    }

    /// Sender: frames held for a peer whose transfer was cancelled while the next chunk was prepared are dropped, not
    /// handed to the session: after its cancel, nothing more of the transfer goes out (a chunk prepared then never
    /// did; `handOver`).
    @Test func framesHeldWhenTheTransferIsCancelledAreDropped() async throws {
        try await TemporaryDirectory.with(prefix: "small-src") { source in
            try await TemporaryDirectory.with(prefix: "small-in") { inbox in
                var files: [SourceFile] = []
                for index in 0..<8 {
                    let url = try TestFiles(in: source).random("f\(index).bin", size: 1000, seed: UInt64(500 + index))
                    files.append(SourceFile(path: url.path, name: "f\(index).bin"))
                }
                try await TransferEngineTests.withEngines(
                    inbox: inbox.path, chunkSize: Self.chunk, compression: .none
                ) { _, sender, bob in
                    // Files 0-4 are held while the pump prepares file 5's chunk, which waits at the gate.
                    await sender.gateChunks(ofFile: 5)
                    let sources = files
                    let sending = Task { try await sender.send(sources, to: [bob]) }
                    defer { sending.cancel() }
                    do {
                        let clock = ContinuousClock()
                        let deadline = clock.now + .seconds(30)
                        while clock.now < deadline, await sender.chunkGateHolds == nil {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        let id = try #require(await sender.chunkGateHolds, "the pump reached file 5")
                        // The user's Ctrl-C: the send's task is cancelled, the transfer with bob stops.
                        sending.cancel()
                        while clock.now < deadline, await sender.withPeer(id, bob, { $0.machine.phase }) == .sending {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        #expect(await sender.withPeer(id, bob, { $0.machine.phase }) != .sending)
                        #expect(await sender.probe.linkEntries == 0, "nothing went to the link before the cancel")
                    } catch {
                        await sender.openChunkGate()  // the pump waits there, else the engine never ends
                        throw error
                    }
                    await sender.openChunkGate()
                    _ = try? await sending.value
                    let entries = await sender.probe.linkEntries
                    #expect(entries == 0, "\(entries) queue entries of chunks went to the link after the cancel")
                }
                let arrived = (try? FileManager.default.contentsOfDirectory(atPath: inbox.path)) ?? []
                #expect(arrived.filter { $0.hasSuffix(".bin") }.isEmpty, "\(arrived)")
            }
        }
    }

    /// Polls `condition` until it holds or 30 seconds have passed.
    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while clock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    struct Seen: Sendable {
        var copiesOfCorrupt = 0
        var fileEnds: [Int]
        var digests: [[UInt8]?]
    }

    /// An honest receiver of one-chunk files that calls the first copy of `corruptFile`'s chunk corrupt, counts the
    /// `fileEnd`s of each file, and answers `published` for each file once its chunk is stored and its fileEnd came.
    static func receiveCallingOneChunkCorrupt(_ mallory: Session, contents: [[UInt8]], corruptFile: Int)
        async throws -> Seen
    {
        var seen = Seen(
            fileEnds: Array(repeating: 0, count: contents.count), digests: Array(repeating: nil, count: contents.count))
        var stored = Array(repeating: false, count: contents.count)
        var published = Array(repeating: false, count: contents.count)
        var calledCorrupt = false
        var transferID: TransferID?
        for await event in mallory.transferEvents {
            guard case .frame(let frame, let peer) = event, let message = try? TransferMessage(frame: frame) else {
                continue
            }
            var replies: [TransferMessage] = []
            switch message {
            case .offer(let offer):
                transferID = offer.transferID
                replies = [
                    .offerReply(
                        .accepting(
                            offer.transferID, codecs: [],
                            files: Array(repeating: .accept(from: 0), count: contents.count)))
                ]
            case .chunk(let chunk):
                let file = Int(chunk.fileIndex)
                #expect(Array(chunk.data) == contents[file])
                if file == corruptFile { seen.copiesOfCorrupt += 1 }
                var status = ChunkStatus.stored
                if file == corruptFile, !calledCorrupt {
                    calledCorrupt = true
                    status = .corrupt
                } else {
                    stored[file] = true
                }
                replies = [
                    .chunkAck(
                        ChunkAck(transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: 0, status: status))
                ]
            case .fileEnd(let end):
                let file = Int(end.fileIndex)
                seen.fileEnds[file] += 1
                seen.digests[file] = end.digest
            default:
                continue
            }
            for file in contents.indices where stored[file] && seen.digests[file] != nil && !published[file] {
                published[file] = true
                guard let transferID else { continue }
                replies.append(
                    .fileResult(
                        FileResult(
                            transferID: transferID, fileIndex: UInt32(file), status: .published,
                            detail: "f\(file).bin")))
            }
            for reply in replies { try await mallory.sendTransferFrame([reply.frame.encoded()], to: peer) }
            if published.allSatisfy({ $0 }) { break }
        }
        return seen
    }
}
