import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// Containment (promise 1): whatever a peer sends, and whatever is swapped in the receive directory meanwhile,
/// nothing outside it is created, changed or removed. Each test keeps a sibling "outside" directory (with a file
/// in it) next to the inbox and compares snapshots of it from before and after, byte for byte.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ContainmentTests {
    /// A parent with `inbox/` and `outside/` (holding `keep.txt`) side by side.
    static func withSiblings(_ body: (_ inbox: String, _ outside: String) async throws -> Void) async throws {
        try await TemporaryDirectory.with(prefix: "ferry-containment") { parent in
            let inbox = parent.path + "/inbox"
            let outside = parent.path + "/outside"
            try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: false)
            try Data("precious".utf8).write(to: URL(fileURLWithPath: outside + "/keep.txt"))
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: parent.path))
            try await body(inbox, outside)
            let outsideBefore = before.entries.filter { $0.path.hasPrefix("outside") }
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: parent.path))
            #expect(after.entries.filter { $0.path.hasPrefix("outside") } == outsideBefore, "\(after)")
            #expect(after.entries.filter { !$0.path.hasPrefix("outside") && !$0.path.hasPrefix("inbox") }.isEmpty)
            #expect(try Data(contentsOf: URL(fileURLWithPath: outside + "/keep.txt")) == Data("precious".utf8))
        }
    }

    static func bytes(_ count: Int, _ seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
    }

    @Test func hostileNamesAreDeniedOrStayInsideAndAPlantedSymlinkIsNeverFollowed() async throws {
        try await Self.withSiblings { inbox, outside in
            #expect(symlink(outside, inbox + "/link") == 0)
            try await TransferHostilePeerTests.withMallory(inbox: inbox, policy: .all) { mallory, bob, _ in
                let long = String(repeating: "n", count: 256)
                let deep = Array(repeating: "abcdefg", count: 500).joined(separator: "/") + "/../../outside/keep.txt"
                // A 240-byte component as sent, 480 in NFC (U+0958 decomposes and does not recompose): too long as it
                // would be written.
                let grows = "x/" + String(repeating: "\u{958}", count: 80)
                let names = [
                    outside + "/keep.txt", "../outside/keep.txt", "a/../../outside/x", "x\u{0}y", long, deep, grows,
                ]
                for name in names {
                    let sender = HostileSender(session: mallory, receiver: bob)
                    try await sender.send(.offer(sender.offer([(name, 4)])))
                    let reply = try #require(await sender.reply())
                    #expect(!reply.accepted && reply.reason == .invalidOffer, "\(name.prefix(40))")
                }
                // A valid name through the planted symlink: accepted, received, but never published through it.
                let sender = HostileSender(session: mallory, receiver: bob)
                let data = Self.bytes(100, 1)
                try await sender.send(.offer(sender.offer([("link/keep.txt", UInt64(data.count))])))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: data)
                try await sender.sendEnd(file: 0, of: data)
                let result = try #require(await sender.result())
                #expect(result.status == .writeFailed, "\(result)")
                // A path over 4096 bytes does not even decode: the link is closed.
                let raw = HostileSender(session: mallory, receiver: bob)
                try await raw.sendRawOffer(
                    path: Array("../outside/".utf8) + Array(repeating: UInt8(ascii: "a"), count: 4097))
                #expect(await raw.linkClosed())
            }
            let visible = try FileManager.default.contentsOfDirectory(atPath: inbox).sorted()
            #expect(visible == [".ferry-staging", "link"])
        }
    }

    /// After some chunks are written, a directory of the offered path and the staging folder itself are replaced
    /// by symlinks to the outside directory: the rest of the transfer still writes only inside.
    @Test func symlinksSwappedInDuringATransferAreNeverFollowed() async throws {
        try await Self.withSiblings { inbox, outside in
            try FileManager.default.createDirectory(atPath: inbox + "/sub", withIntermediateDirectories: false)
            try await TransferHostilePeerTests.withMallory(inbox: inbox, policy: .all) { mallory, bob, _ in
                let chunk = Limits.minChunkSize
                let first = Self.bytes(3 * chunk, 7)
                let second = Self.bytes(2 * chunk, 9)
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(
                    .offer(sender.offer([("sub/keep.txt", UInt64(first.count)), ("keep.txt", UInt64(second.count))])))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: Array(first[0..<chunk]))
                #expect(try #require(await sender.ack()).status == .stored)  // sent after the write

                let manager = FileManager.default
                try manager.moveItem(atPath: inbox + "/sub", toPath: inbox + "/sub-moved")
                #expect(symlink(outside, inbox + "/sub") == 0)
                try manager.moveItem(atPath: inbox + "/.ferry-staging", toPath: inbox + "/staging-moved")
                #expect(symlink(outside, inbox + "/.ferry-staging") == 0)

                for offset in stride(from: chunk, to: first.count, by: chunk) {
                    try await sender.sendChunk(
                        file: 0, offset: UInt64(offset), raw: Array(first[offset..<offset + chunk]))
                    #expect(try #require(await sender.ack()).status == .stored)
                }
                try await sender.sendEnd(file: 0, of: first)
                // A verified file is published as it lands, before the next file's chunks: its result comes now.
                let firstResult = try #require(await sender.result())
                #expect(firstResult.fileIndex == 0 && firstResult.status == .writeFailed, "sub/ is a symlink now")
                for offset in stride(from: 0, to: second.count, by: chunk) {
                    try await sender.sendChunk(
                        file: 1, offset: UInt64(offset), raw: Array(second[offset..<offset + chunk]))
                    #expect(try #require(await sender.ack()).status == .stored)
                }
                try await sender.sendEnd(file: 1, of: second)
                let secondResult = try #require(await sender.result())
                #expect(secondResult.fileIndex == 1 && secondResult.status == .published, "the top is fine")
            }
            // The second file went from the staging folder it was written in to the top of the inbox.
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox + "/keep.txt")) == Data(Self.bytes(2 * 65_536, 9)))
            #expect(!FileManager.default.fileExists(atPath: inbox + "/sub-moved/keep.txt"))
        }
    }

    /// The staged file itself is replaced by a symlink to a file outside after its first chunk: the rest is written
    /// to the file that was opened, and the symlink is never published as the received file.
    @Test func aStagedFileSwappedForASymlinkIsNeverPublished() async throws {
        try await Self.withSiblings { inbox, outside in
            try await TransferHostilePeerTests.withMallory(inbox: inbox, policy: .all) { mallory, bob, _ in
                let chunk = Limits.minChunkSize
                let data = Self.bytes(2 * chunk, 3)
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(.offer(sender.offer([("keep.txt", UInt64(data.count))])))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: Array(data[0..<chunk]))
                #expect(try #require(await sender.ack()).status == .stored)

                let staging = inbox + "/.ferry-staging"
                let key = try #require(try FileManager.default.contentsOfDirectory(atPath: staging).first)
                try FileManager.default.removeItem(atPath: staging + "/" + key)
                #expect(symlink(outside + "/keep.txt", staging + "/" + key) == 0)

                try await sender.sendChunk(file: 0, offset: UInt64(chunk), raw: Array(data[chunk...]))
                #expect(try #require(await sender.ack()).status == .stored)
                try await sender.sendEnd(file: 0, of: data)
                let result = try #require(await sender.result())
                #expect(result.status == .writeFailed && result.detail.contains("replaced"), "\(result)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: inbox) == [".ferry-staging"])
        }
    }

    @Test func namesArePublishedInNFCAndAnNFDTwinCountsAsTaken() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            let nfd = "cafe\u{301}.txt"
            let nfc = "caf\u{E9}.txt"
            try Data([0]).write(to: URL(fileURLWithPath: temporary.path + "/" + nfd))
            var published: [[UInt8]] = []
            for (index, name) in [nfd, nfc].enumerated() {
                let key = String(repeating: "0", count: 63) + "\(index + 1)"
                let (file, _) = try directory.stagedFile(key: key)
                try file.write([UInt8(index + 1)], at: 0)
                file.close()
                published.append(
                    Array(
                        try directory.publish(
                            key: key, components: [name], permissions: 0o644, modificationTime: (0, 0)
                        )
                        .utf8))
            }
            #expect(published == [Array("caf\u{E9} (1).txt".utf8), Array("caf\u{E9} (2).txt".utf8)])
            let names = try FileManager.default.contentsOfDirectory(atPath: temporary.path).map { Array($0.utf8) }
            #expect(!names.contains(Array(nfc.utf8)), "the NFD original keeps the name; no NFC look-alike beside it")

            // A directory spelled in NFD is reused, not doubled.
            try FileManager.default.createDirectory(
                atPath: temporary.path + "/re\u{301}sume\u{301}", withIntermediateDirectories: false)
            let key = String(repeating: "0", count: 63) + "9"
            try directory.stagedFile(key: key).file.close()
            let inside = try directory.publish(
                key: key, components: ["r\u{E9}sum\u{E9}", "cv.txt"], permissions: 0o644, modificationTime: (0, 0))
            #expect(Array(inside.utf8) == Array("re\u{301}sume\u{301}/cv.txt".utf8))
        }
    }

    @Test func twoOffersOfOneNameInNFDAndNFCNeverLookAlike() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, _ in
                let both = HostileSender(session: mallory, receiver: bob)
                try await both.send(.offer(both.offer([("cafe\u{301}", 1), ("caf\u{E9}", 1)])))
                #expect(try #require(await both.reply()).reason == .invalidOffer, "one offer: the name twice")
                var names: [[UInt8]] = []
                for (index, name) in ["cafe\u{301}", "caf\u{E9}"].enumerated() {
                    let sender = HostileSender(session: mallory, receiver: bob)
                    try await sender.send(.offer(sender.offer([(name, 1)])))
                    #expect(try #require(await sender.reply()).accepted)
                    try await sender.sendChunk(file: 0, offset: 0, raw: [UInt8(index)])
                    try await sender.sendEnd(file: 0, of: [UInt8(index)])
                    let result = try #require(await sender.result())
                    #expect(result.status == .published)
                    names.append(Array(result.detail.utf8))
                }
                #expect(names == [Array("caf\u{E9}".utf8), Array("caf\u{E9} (1)".utf8)])
            }
        }
    }
}
