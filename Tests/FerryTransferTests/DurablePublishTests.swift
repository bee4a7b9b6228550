import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Synchronization
import Testing

@testable import FerryTransfer

/// "Published" means the file survives a crash: its mode and time are set before its data is synced, the rename
/// into place is followed by an `fsync` of every directory on the file's path, and only then is the file reported
/// (event and `fileResult`). A power loss cannot be made here; the order of the calls that survives one can be shown,
/// through the receive directory's recorder (`PublishStep`).
@Suite(.serialized, .timeLimit(.minutes(2))) struct DurablePublishTests {
    /// The steps a receive directory took and the results the sender heard, in one order.
    final class Journal: Sendable {
        enum Entry: Equatable, Sendable {
            case step(PublishStep)
            /// The sender got the `fileResult` of the file published under this name.
            case reported(String)
        }

        private let entries = Mutex<[Entry]>([])
        func record(_ entry: Entry) { entries.withLock { $0.append(entry) } }
        var all: [Entry] { entries.withLock { $0 } }
        var steps: [PublishStep] { all.compactMap { if case .step(let step) = $0 { step } else { nil } } }
    }

    /// Runs `body` with "mallory" connected to a receiving engine on `inbox` whose receive directory tells `journal`
    /// each step.
    static func withRecordingReceiver(
        inbox: String, journal: Journal,
        _ body: (_ sender: HostileSender) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let directory = try ReceiveDirectory(path: inbox) { journal.record(.step($0)) }
        try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: TransferEngineTests.configuration("mallory"), reactor: reactor) {
                mallory in
                let receiving = TransferConfiguration(receiveDirectory: inbox, offerPolicy: .all)
                try await TransferEngine.run(session: bob, configuration: receiving, directory: directory) { _ in
                    let info = try await mallory.connect(
                        toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                    try await body(HostileSender(session: mallory, receiver: info.peerID))
                }
            }
        }
    }

    /// Offers `files` (name and contents) in one offer, sends them all, and records each result in `journal` as it
    /// arrives; returns the results.
    static func sendAll(_ files: [(String, [UInt8])], _ sender: HostileSender, _ journal: Journal) async throws
        -> [FileResult]
    {
        try await sender.send(.offer(sender.offer(files.map { ($0.0, UInt64($0.1.count)) })))
        #expect(try #require(await sender.reply()).accepted)
        for (index, file) in files.enumerated() {
            try await sender.sendChunk(file: UInt32(index), offset: 0, raw: file.1)
            try await sender.sendEnd(file: UInt32(index), of: file.1)
        }
        var results: [FileResult] = []
        while results.count < files.count, let result = await sender.result() {
            journal.record(.reported(result.detail))
            results.append(result)
        }
        return results
    }

    /// What is wrong with the order in which `name` was published, per `entries`; empty when its mode and time were
    /// set before a sync of its data, the sync came before its rename, and every directory on its path was synced
    /// after the rename and before the sender heard of it.
    static func problems(publishing name: String, in entries: [Journal.Entry]) -> [String] {
        func index(_ entry: Journal.Entry, after start: Int = 0) -> Int? {
            entries.indices.first { $0 >= start && entries[$0] == entry }
        }
        guard
            let rename = entries.indices.first(where: {
                if case .step(.rename(_, let to)) = entries[$0] { to == name } else { false }
            }), case .step(.rename(let key, _)) = entries[rename]
        else { return ["\(name) was never renamed into place"] }
        var problems: [String] = []
        if let attributes = index(.step(.attributes(key: key))) {
            let sync = entries.indices.first {
                $0 > attributes && [.step(.syncFile(key: key)), .step(.syncFileSystem)].contains(entries[$0])
            }
            if sync.map({ $0 > rename }) ?? true {
                problems.append("\(name): no sync of its data between setting its mode and time and its rename")
            }
        } else {
            problems.append("\(name): its mode and time were never set")
        }
        guard let reported = index(.reported(name)) else { return problems + ["\(name) was never reported"] }
        let parts = name.split(separator: "/").dropLast()
        let directories = ["."] + parts.indices.map { parts[...$0].joined(separator: "/") }
        for directory in directories {
            guard let synced = index(.step(.syncDirectory(directory)), after: rename), synced < reported else {
                problems.append("\(name): directory \(directory) not synced between the rename and the report")
                continue
            }
        }
        return problems
    }

    @Test func aPublishedFileHadItsModeTimeDataAndDirectorySyncedBeforeTheSenderHeard() async throws {
        try await TemporaryDirectory.with(prefix: "durable-in") { inbox in
            let journal = Journal()
            let files: [(String, [UInt8])] = [
                ("one.txt", Array("first\n".utf8)), ("sub/two.txt", Array("second\n".utf8)),
                ("sub/deeper/three.txt", Array("third\n".utf8)),
            ]
            try await Self.withRecordingReceiver(inbox: inbox.path, journal: journal) { sender in
                let results = try await Self.sendAll(files, sender, journal)
                #expect(results.map(\.status) == [.published, .published, .published])
            }
            for (name, _) in files {
                let problems = Self.problems(publishing: name, in: journal.all)
                #expect(problems.isEmpty, "\(problems) in \(journal.all)")
            }
        }
    }

    @Test func aFileAloneHadItsModeTimeDataAndDirectorySyncedBeforeTheSenderHeard() async throws {
        try await TemporaryDirectory.with(prefix: "durable-in") { inbox in
            let journal = Journal()
            try await Self.withRecordingReceiver(inbox: inbox.path, journal: journal) { sender in
                let results = try await Self.sendAll([("alone.txt", Array("alone\n".utf8))], sender, journal)
                #expect(results.map(\.status) == [.published])
            }
            let problems = Self.problems(publishing: "alone.txt", in: journal.all)
            #expect(problems.isEmpty, "\(problems) in \(journal.all)")
        }
    }

    /// A receive directory created by the receiver is itself a name: its parent is synced, once, when it is created.
    @Test func aReceiveDirectoryCreatedByTheReceiverIsSyncedIntoItsParent() async throws {
        try await TemporaryDirectory.with(prefix: "durable-root") { temporary in
            let journal = Journal()
            _ = try ReceiveDirectory(path: temporary.path + "/new") { journal.record(.step($0)) }
            #expect(journal.steps == [.syncDirectory("..")])
            let again = Journal()
            _ = try ReceiveDirectory(path: temporary.path + "/new") { again.record(.step($0)) }
            #expect(again.steps == [], "a directory that was there already is not synced again")
        }
    }

    /// One batch of four files in three directories: every mode and time first, one sync, the renames, then each
    /// directory on the files' paths synced exactly once (deepest first); the same with a sync per file.
    @Test(arguments: [false, true]) func aBatchSyncsEachDirectoryOnceAfterAllItsRenames(syncEachFile: Bool)
        async throws
    {
        try await TemporaryDirectory.with(prefix: "durable-batch") { temporary in
            let journal = Journal()
            let directory = try ReceiveDirectory(path: temporary.path) { journal.record(.step($0)) }
            let names = ["a.txt", "sub/b.txt", "sub/c.txt", "sub/deeper/d.txt"]
            let keys = ["a", "b", "c", "d"].map { String(repeating: $0, count: 64) }
            var batch: [Publication] = []
            for (name, key) in zip(names, keys) {
                let staged = try directory.stagedFile(key: key).file
                try staged.write(Array(name.utf8), at: 0)
                batch.append(
                    Publication(
                        key: key, components: name.split(separator: "/").map(String.init), permissions: 0o640,
                        modificationTime: (1_700_000_000, 5), staged: staged))
            }
            let outcomes = directory.publish(batch, syncEachFile: syncEachFile)
            #expect(try outcomes.map { try $0.result.get() } == names.map { .published($0) })
            let syncs: [PublishStep] = syncEachFile ? keys.map { .syncFile(key: $0) } : [.syncFileSystem]
            let expected: [PublishStep] =
                keys.map { .attributes(key: $0) } + syncs + zip(keys, names).map { .rename(key: $0, to: $1) }
                + [.syncDirectory("sub/deeper"), .syncDirectory("sub"), .syncDirectory(".")]
            #expect(journal.steps == expected)
            var status = stat()
            #expect(lstat(temporary.path + "/sub/b.txt", &status) == 0)
            #expect(status.st_mode & 0o777 == 0o640 && status.st_mtim.tv_sec == 1_700_000_000)
        }
    }
}
