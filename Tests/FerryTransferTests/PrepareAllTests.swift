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
}
