import FerrySystem
import FerryTestSupport
import Foundation
import Testing

@testable import FerryTransfer

/// A newer version replaces only the file its own sender delivered there, unchanged (PROTOCOL.md 11.10 rule 11).
@Suite struct ReceiveReplacingTests {
    static func key(_ n: Int) -> String {
        String(repeating: "0", count: 62) + String(format: "%02x", n)
    }

    static func publish(_ directory: ReceiveDirectory, _ n: Int, _ text: String, by sender: String?) throws -> String {
        let (file, _) = try directory.stagedFile(key: key(n))
        try file.write(Array(text.utf8), at: 0)
        file.close()
        var publication = Publication(
            key: key(n), components: ["x.txt"], permissions: 0o644, modificationTime: (1_767_225_600, UInt32(n)))
        publication.deliveredBy = sender
        return try directory.publish([publication])[0].result.get().name
    }

    static func text(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    @Test func onlyTheSameSendersUnchangedFileIsReplaced() async throws {
        try await TemporaryDirectory.with { temporary in
            let path = temporary.path + "/inbox"
            let directory = try ReceiveDirectory(path: path)
            defer { directory.close() }
            #expect(try Self.publish(directory, 1, "one", by: "aa") == "x.txt")
            #expect(try Self.publish(directory, 2, "two!", by: "aa") == "x.txt")
            #expect(try Self.text(path + "/x.txt") == "two!")
            // Another sender, and an offer without the flag: beside it.
            #expect(try Self.publish(directory, 3, "other", by: "bb") == "x (1).txt")
            #expect(try Self.publish(directory, 4, "plain", by: nil) == "x (2).txt")
            #expect(try Self.text(path + "/x.txt") == "two!")
            // Edited here (size and time change): never replaced.
            try Data("edited".utf8).write(to: URL(fileURLWithPath: path + "/x.txt"))
            #expect(try Self.publish(directory, 5, "five", by: "aa") == "x (3).txt")
            #expect(try Self.text(path + "/x.txt") == "edited")
        }
    }

    @Test func aRecordReadsBackAndGarbageIsNoRecord() {
        let status = FerrySystem.FileStatus(
            size: 5, permissions: 0o644, kind: .regular,
            modificationTime: FileTimestamp(seconds: -3, nanoseconds: 999_999_999), device: 2049, inode: 77,
            changeTime: FileTimestamp(seconds: 0, nanoseconds: 0))
        let record = ReceiveDirectory.DeliveryRecord(sender: "ab", status: status)
        #expect(ReceiveDirectory.DeliveryRecord(line: record.line) == record)
        #expect(record.describes(status))
        var grown = status
        grown.size = 6
        #expect(!record.describes(grown))
        for garbage in ["", "v2 ab 1 2 3 4 5", "v1 ab 1 2 3 4", "v1 ab x 2 3 4 5", "v1 ab 1 2 3 4 5000000000"] {
            #expect(ReceiveDirectory.DeliveryRecord(line: garbage) == nil, "\(garbage)")
        }
    }
}
