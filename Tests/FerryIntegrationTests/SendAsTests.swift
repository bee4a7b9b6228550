import Foundation
import FerryTestSupport
import Testing

/// Issue 28, 5: `ferry send --as NAME` beyond standard input.
extension IntegrationTests {
    @Suite(.serialized) struct SendAsTests {
        /// Issue 28, 5: `--as NAME` worked only for standard input; a single file (or folder) is renamed on send.
        @Test func asRenamesTheOneFileSentAndAFoldersTopName() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("IMG_0042.jpg", size: 2000)
            let (receiver, port) = try harness.receiver(accept: "all", once: true)
            let sent = try harness.send([file.path], to: [port], ["--as", "beach.jpg"])
            #expect(sent.status == 0, "\(sent.summary ?? [:])")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["beach.jpg": 2000])
            // A folder: its files go under the new name.
            let folder = harness.source.path + "/DCIM"
            try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
            try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: folder + "/a.bin"))
            try Data(repeating: 2, count: 20).write(to: URL(fileURLWithPath: folder + "/sub/b.bin"))
            let (again, secondPort) = try harness.receiver(accept: "all", once: true)
            #expect(try harness.send([folder], to: [secondPort], ["--as", "holiday"]).status == 0)
            #expect(try again.waitForExit(timeout: .seconds(60)) == 0)
            let files = try TransferHarness.visibleFiles(in: harness.inbox.path)
            #expect(files["holiday/a.bin"] == 10 && files["holiday/sub/b.bin"] == 20, "\(files)")
            #expect(!files.keys.contains { $0.hasPrefix("DCIM") }, "\(files)")
        }
    }
}
