import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// In-memory payloads: `Data` sent as entries of an offer (mixed with files), and received entries handed to the
/// application in memory up to the size it chose (`MemoryDelivery`), larger ones published as files; only once
/// verified.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PayloadTests {
    /// Runs `body` with a receiving engine (into `inbox`, delivering in memory as `memory` says) and a sending engine
    /// connected to it.
    static func withEngines(
        inbox: String, memory: MemoryDelivery?,
        _ body: (_ receiver: TransferEngine, _ sender: TransferEngine, _ receiverID: PeerID) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: TransferEngineTests.configuration("alice"), reactor: reactor) {
                alice in
                var receiving = TransferConfiguration(
                    receiveDirectory: inbox, offerPolicy: .all, chunkSize: Limits.minChunkSize)
                receiving.memoryDelivery = memory
                let sending = TransferConfiguration(chunkSize: Limits.minChunkSize)
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

    /// The receiver's file outcomes, by name, once `count` have been reported (the events are buffered: the send
    /// has returned, so they are all there).
    static func received(_ count: Int, by receiver: TransferEngine) async -> [String: FileOutcome] {
        var outcomes: [String: FileOutcome] = [:]
        for await event in receiver.events {
            if case .fileFinished(let outcome) = event { outcomes[outcome.fileName] = outcome }
            if outcomes.count == count { break }
        }
        return outcomes
    }

    /// Names in the inbox, the staging folder left out; and what is left in the staging folder.
    static func contents(of inbox: String) throws -> (published: [String], staged: [String]) {
        let published = try FileManager.default.contentsOfDirectory(atPath: inbox).filter { $0 != ".ferry-staging" }
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: inbox + "/.ferry-staging")) ?? []
        return (published.sorted(), staged)
    }

    @Test func payloadsAndFilesInOneOfferArriveAsFilesWithTheirMediaType() async throws {
        try await TemporaryDirectory.with(prefix: "payload-src") { source in
            try await TemporaryDirectory.with(prefix: "payload-in") { inbox in
                let file = try TestFiles(in: source).random("disk.bin", size: 70_000, seed: 1)
                // Several chunks, from a slice whose indices do not start at 0.
                let large = Data(DigestCheckTests.bytes(3 * Limits.minChunkSize + 17 + 5, seed: 2)).dropFirst(5)
                let items: [TransferItem] = [
                    .payload(Payload(name: "memory/large.bin", data: large, mediaType: "application/x-test")),
                    .file(SourceFile(path: file.path, name: "disk.bin")),
                    .payload(Payload(name: "empty.txt", data: Data())),
                ]
                try await Self.withEngines(inbox: inbox.path, memory: nil) { receiver, sender, bob in
                    let outcome = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(outcome.isSuccess && outcome.filesSucceeded == 3, "\(outcome)")
                    let outcomes = await Self.received(3, by: receiver)
                    #expect(outcomes["memory/large.bin"]?.mediaType == "application/x-test")
                    #expect(outcomes.values.allSatisfy { $0.payload == nil && $0.publishedName != nil })
                }
                let read = { (name: String) in try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/" + name)) }
                #expect(try read("memory/large.bin") == large)
                #expect(try read("disk.bin") == (try Data(contentsOf: file)))
                #expect(try read("empty.txt").isEmpty)
            }
        }
    }

    @Test func entriesUpToTheChosenSizeAreDeliveredInMemoryLargerOnesAsFiles() async throws {
        try await TemporaryDirectory.with(prefix: "payload-src") { source in
            try await TemporaryDirectory.with(prefix: "payload-in") { inbox in
                let limit = 100_000
                let small = Data(DigestCheckTests.bytes(limit, seed: 3))
                let over = Data(DigestCheckTests.bytes(limit + 1, seed: 4))
                let file = try TestFiles(in: source).random("tiny.bin", size: 50, seed: 5)
                let items: [TransferItem] = [
                    .payload(Payload(name: "small.bin", data: small)),
                    .payload(Payload(name: "over.bin", data: over)),
                    .file(SourceFile(path: file.path, name: "tiny.bin")),
                ]
                try await Self.withEngines(inbox: inbox.path, memory: MemoryDelivery(maxSize: UInt64(limit))) {
                    receiver, sender, bob in
                    let outcome = try #require(try await sender.send(items, to: [bob]).first)
                    #expect(outcome.isSuccess, "\(outcome)")
                    let outcomes = await Self.received(3, by: receiver)
                    #expect(outcomes["small.bin"]?.payload == small)
                    #expect(outcomes["small.bin"]?.publishedName == nil)
                    #expect(outcomes["tiny.bin"]?.payload == (try Data(contentsOf: file)), "a file's size decides")
                    #expect(outcomes["over.bin"]?.payload == nil)
                    #expect(outcomes["over.bin"]?.publishedName == "over.bin")
                }
                let (published, staged) = try Self.contents(of: inbox.path)
                #expect(published == ["over.bin"], "what went to memory is not published")
                #expect(staged.isEmpty, "nor left staged")
                #expect(try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/over.bin")) == over)
            }
        }
    }

    @Test func onlyTheChosenMediaTypesAreTakenAndAlsoPublishKeepsThemAsFiles() async throws {
        try await TemporaryDirectory.with(prefix: "payload-in") { inbox in
            let message = Payload.message("hello\nworld")
            let picture = Payload(name: "dot.bin", data: Data([1, 2, 3]), mediaType: "image/x-test")
            let memory = MemoryDelivery(maxSize: 1 << 20, mediaTypes: [Payload.messageMediaType], alsoPublish: true)
            try await Self.withEngines(inbox: inbox.path, memory: memory) { receiver, sender, bob in
                let outcome = try #require(
                    try await sender.send([.payload(message), .payload(picture)], to: [bob]).first)
                #expect(outcome.isSuccess, "\(outcome)")
                let outcomes = await Self.received(2, by: receiver)
                #expect(outcomes["message.txt"]?.payload == Data("hello\nworld".utf8))
                #expect(outcomes["message.txt"]?.mediaType == Payload.messageMediaType)
                #expect(outcomes["message.txt"]?.publishedName == "message.txt")
                #expect(outcomes["dot.bin"]?.payload == nil)
            }
            #expect(try Self.contents(of: inbox.path).published == ["dot.bin", "message.txt"])
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/message.txt")) == Data("hello\nworld".utf8))
        }
    }

    @Test func invalidPayloadsAreRefusedBeforeAnythingIsOffered() async throws {
        try await TemporaryDirectory.with(prefix: "payload-in") { inbox in
            try await Self.withEngines(inbox: inbox.path, memory: nil) { _, sender, bob in
                await #expect(throws: TransferError.self) {
                    try await sender.send(Payload(name: "../escape", data: Data([1])), to: [bob])
                }
                await #expect(throws: TransferError.self) {
                    try await sender.send(
                        Payload(name: "a.txt", data: Data([1]), mediaType: "text/plain; utf-8"), to: [bob])
                }
                await #expect(throws: TransferError.self) {
                    try await sender.send(
                        Payload(name: "a.txt", data: Data([1]), mediaType: String(repeating: "x", count: 128)),
                        to: [bob])
                }
                await #expect(throws: TransferError.emptyPath) {
                    try await sender.send(Payload(name: "", data: Data([1])), to: [bob])
                }
                await #expect(throws: TransferError.self) {
                    try await sender.send(
                        [.payload(Payload(name: "a", data: Data([1]))), .payload(Payload(name: "a", data: Data([2])))],
                        to: [bob])
                }
                await #expect(throws: TransferError.nothingToSend) {
                    try await sender.send([TransferItem](), to: [bob])
                }
            }
            #expect(try Self.contents(of: inbox.path).published.isEmpty)
        }
    }

    /// The staging and verification rules hold for what is delivered in memory: a sender whose digest does not match
    /// its bytes gets a mismatch, and the application gets a failure, never the bytes.
    @Test func aPayloadThatDoesNotVerifyIsNeverDeliveredInMemory() async throws {
        let data = DigestCheckTests.bytes(2 * DigestCheckTests.chunk + 10, seed: 6)
        try await TemporaryDirectory.with(prefix: "payload-in") { inbox in
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: TransferEngineTests.configuration("mallory"), reactor: reactor) {
                    mallory in
                    var receiving = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
                    receiving.memoryDelivery = MemoryDelivery(maxSize: 1 << 20)
                    try await TransferEngine.run(session: bob, configuration: receiving) { engine in
                        let info = try await mallory.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        let sender = HostileSender(session: mallory, receiver: info.peerID)
                        try await sender.send(.offer(sender.offer([("note.bin", UInt64(data.count))])))
                        #expect(try #require(await sender.reply()).accepted)
                        var claimed = data
                        claimed[0] ^= 1
                        try await DigestCheckTests.send(data, claiming: claimed, by: sender)
                        DigestCheckTests.expectMismatch(await sender.result())
                        let outcome = try #require(await Self.received(1, by: engine)["note.bin"])
                        #expect(outcome.payload == nil && outcome.failure != nil, "\(outcome)")
                    }
                }
            }
            #expect(try Self.contents(of: inbox.path).published.isEmpty)
        }
    }
}

/// The chunk source reads a payload as it reads a file: the same bytes at every offset.
@Suite struct SourceHandleTests {
    @Test func memoryReadsMatchTheBytesAtEveryOffset() throws {
        let whole = Data((0..<300).map { UInt8($0 & 0xFF) })
        let slice = whole[50..<250]  // indices 50..<250
        let status = FerrySystem.FileStatus(
            size: 200, permissions: 0o644, kind: .regular, modificationTime: FileTimestamp(seconds: 1, nanoseconds: 0),
            device: 0, inode: 0)
        let handle = try SourceHandle.open(path: "unused", memory: slice, status: status)
        #expect(try handle.read(count: 10, at: 0) == Array(slice.prefix(10)))
        #expect(try handle.read(count: 100, at: 150) == Array(slice.suffix(50)), "short at the end")
        #expect(try handle.read(count: 10, at: 200).isEmpty)
        #expect(try handle.read(count: 10, at: 500).isEmpty)
        #expect(try handle.status() == status, "a payload never changes")
    }
}
