import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A full disk ends the transfer (`transferCancel` diskFull), and the file whose write failed loses its staged data
/// (removed, to free the space): that file ends with its result first, so that the sender never counts its
/// acknowledged bytes among what the receiver keeps for a resume (PROTOCOL.md 11.10 rule 7).
@Suite(.serialized, .timeLimit(.minutes(2))) struct DiskFullResultTests {
    @Test func aFileWhoseStagedDataAFullDiskRemovedEndsWithItsResultBeforeTheCancel() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            let chunk = 1 << 20
            let bytes = TestFiles.randomBytes(count: 17 * chunk, seed: 31)
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                // Write-behind's wait for the disk reports ENOSPC (a file system that ran out of blocks at writeback).
                await engine.useDirectWrites(false)
                await engine.useWriteback(
                    Writeback { file, range throws(SystemError) in
                        try file.evictWritten(at: range.lowerBound, count: Int(range.count))
                        throw SystemError(call: "sync_file_range()", errno: .noSpace)
                    })
                let sender = HostileSender(session: mallory, receiver: bob)
                let files = [("large.bin", UInt64(bytes.count)), ("next.bin", UInt64(chunk))]
                try await sender.send(.offer(sender.offer(files, chunkSize: chunk)))
                #expect(try #require(await sender.reply()).accepted)
                for offset in stride(from: 0, to: bytes.count, by: chunk) {
                    try await sender.sendChunk(
                        file: 0, offset: UInt64(offset), raw: Array(bytes[offset..<offset + chunk]))
                }
                try await sender.sendEnd(file: 0, of: bytes, chunkSize: chunk)
                var result: FileResult?
                let cancel = await sender.waitFor { message -> TransferCancel? in
                    switch message {
                    case .fileResult(let got): result = got
                    case .cancel(let cancel): return cancel
                    default: break
                    }
                    return nil
                }
                #expect(cancel?.reason == .diskFull, "\(String(describing: cancel))")
                let failed = try #require(result, "no result for the file before the cancel")
                #expect(failed.fileIndex == 0 && failed.status == .writeFailed, "\(failed)")
            }
            #expect(!FileManager.default.fileExists(atPath: inbox.path + "/large.bin"))
            let staged = try FileManager.default.contentsOfDirectory(atPath: inbox.path + "/.ferry-staging").filter {
                (try? FileManager.default.attributesOfItem(atPath: inbox.path + "/.ferry-staging/" + $0)[.size] as? Int)
                    ?? 0 > 0
            }
            #expect(staged.isEmpty, "its staged data was removed: \(staged)")
        }
    }
}
