import FerryTestSupport
import Foundation
import Testing

@testable import FerryTransfer

/// The items of an offer are prepared by two threads (`PreparedFile.prepareAll`): the offer lists them in the order
/// given, each with its own size and media type, and the first item that cannot be read, in that order, is the one
/// the error names.
@Suite struct PrepareAllTests {
    @Test func manyFilesArePreparedInTheirOrder() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-prepare-all") { directory in
            let files = TestFiles(in: directory)
            var items: [TransferItem] = []
            var sizes: [UInt64] = []
            for index in 0..<101 {
                let url =
                    index % 3 == 0
                    ? try files.text("t\(index).txt", size: 100 + index, seed: UInt64(index))
                    : try files.random("r\(index).bin", size: 100 + index, seed: UInt64(index))
                items.append(.file(SourceFile(path: url.path, name: url.lastPathComponent)))
                sizes.append(UInt64(100 + index))
            }
            let message = Payload.message("hello")
            items.insert(.payload(message), at: 50)
            sizes.insert(UInt64(message.data.count), at: 50)
            let prepared = try await PreparedFile.prepareAll(items)
            #expect(prepared.map(\.offered.path) == items.map(\.name))
            #expect(prepared.map(\.offered.size) == sizes)
            #expect(prepared[50].offered.mediaType == Payload.messageMediaType)
        }
    }

    @Test func theFirstUnreadableItemInOrderIsTheOneNamed() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-prepare-all") { directory in
            let files = TestFiles(in: directory)
            var items: [TransferItem] = []
            for index in 0..<40 {
                let url = try files.random("f\(index).bin", size: 1000, seed: UInt64(index))
                items.append(.file(SourceFile(path: url.path, name: url.lastPathComponent)))
            }
            items[7] = .file(SourceFile(path: directory.path + "/missing-first", name: "missing-first"))
            items[30] = .file(SourceFile(path: directory.path + "/missing-second", name: "missing-second"))
            await #expect {
                _ = try await PreparedFile.prepareAll(items)
            } throws: { error in
                guard case .notReadable(let path, _) = error as? TransferError else { return false }
                return path.hasSuffix("/missing-first")
            }
        }
    }

    /// A caller cancelled before or while its items are prepared stops the threads at their next item: the call
    /// throws `cancelled` (a folder of 100 000 files is not opened to the end for a send that was given up).
    @Test func aCancelledPreparingStopsAndSaysSo() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-prepare-all") { directory in
            let files = TestFiles(in: directory)
            var items: [TransferItem] = []
            for index in 0..<20 {
                let url = try files.random("f\(index).bin", size: 100, seed: UInt64(index))
                items.append(.file(SourceFile(path: url.path, name: url.lastPathComponent)))
            }
            let (gate, open) = AsyncStream<Void>.makeStream()
            let preparing = Task {
                for await _ in gate { break }
                return try await PreparedFile.prepareAll(items)
            }
            preparing.cancel()
            open.yield()
            await #expect(throws: TransferError.cancelled) { try await preparing.value }
        }
    }

    /// Items prepared before the send (`TransferEngine.prepare`, as `ferry send` does while it connects) go as
    /// prepared; a file changed in between fails as one changed during the send, and nothing of it is published.
    @Test func aFileChangedAfterItWasPreparedIsNotSentAsVerified() async throws {
        try await TemporaryDirectory.with(prefix: "prepared-src") { source in
            try await TemporaryDirectory.with(prefix: "prepared-in") { inbox in
                let chunk = 65_536
                let kept = try TestFiles(in: source).random("kept.bin", size: 3 * chunk, seed: 1)
                let changed = try TestFiles(in: source).random("changed.bin", size: 3 * chunk, seed: 2)
                try await TransferEngineTests.withEngines(inbox: inbox.path, chunkSize: chunk, compression: .none) {
                    _, sender, bob in
                    let prepared = try await sender.prepare([
                        .file(SourceFile(path: kept.path, name: "kept.bin")),
                        .file(SourceFile(path: changed.path, name: "changed.bin")),
                    ])
                    #expect(prepared.count == 2)
                    try SourceChangeTests.rewriteInPlace(changed.path, at: chunk, count: 10)
                    let outcome = try #require(try await sender.send(prepared, to: [bob]).first)
                    #expect(outcome.filesSucceeded == 1 && outcome.filesFailed == 1, "\(outcome)")
                }
                #expect(try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/kept.bin")) == Data(contentsOf: kept))
                #expect(!FileManager.default.fileExists(atPath: inbox.path + "/changed.bin"))
            }
        }
    }
}
