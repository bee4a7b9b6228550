import Foundation
import FerryTestSupport
import Testing

/// Issue 28, 6: the empty folders of a folder sent are recreated at the receiver (the offer's folders section,
/// PROTOCOL.md 11.3), and `ferry hash --json` lists the same folders as the send offers.
extension IntegrationTests {
    @Suite(.serialized) struct FolderSendTests {
        static func isDirectory(_ path: String) -> Bool {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        }

        @Test func aFolderSentRecreatesItsEmptyFoldersAtTheReceiver() async throws {
            let harness = try TransferHarness()
            let album = harness.source.path + "/album"
            let manager = FileManager.default
            for folder in ["empty", "deep/er/est", "only-link", "sub"] {
                try manager.createDirectory(atPath: album + "/" + folder, withIntermediateDirectories: true)
            }
            try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: album + "/a.bin"))
            try Data(repeating: 2, count: 20).write(to: URL(fileURLWithPath: album + "/sub/b.bin"))
            try manager.createSymbolicLink(atPath: album + "/only-link/l", withDestinationPath: "/etc/hostname")
            let (receiver, port) = try harness.receiver(accept: "all", once: true)
            let sent = try harness.send([album], to: [port])
            #expect(sent.status == 0, "\(sent.summary ?? [:])")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            let inbox = harness.inbox.path
            let expected = ["album/deep/er/est", "album/empty", "album/only-link"]
            for folder in expected {
                #expect(Self.isDirectory(inbox + "/" + folder), "\(folder) missing: \(receiver.capturedOutput())")
            }
            #expect(try TransferHarness.visibleFiles(in: inbox) == ["album/a.bin": 10, "album/sub/b.bin": 20])
            #expect(try manager.contentsOfDirectory(atPath: inbox + "/album/only-link").isEmpty)
            #expect(sent.summary?["emptyFolders"] as? Int == 3, "\(sent.summary ?? [:])")
            #expect(sent.summary?["files"] as? Int == 2)
            let finished = receiver.allStdoutLines.compactMap(TransferHarness.json).last {
                $0["event"] as? String == "finished"
            }
            #expect(finished?["emptyFolders"] as? Int == 3 && finished?["emptyFoldersFailed"] as? Int == 0)
            // `ferry hash --json` names the same empty folders as the offer.
            let hashed = try FerryProcess.run(FerryBinary.url.path, ["hash", "--json", album]).requireSuccess()
            let folders = hashed.stdout.split(separator: "\n").compactMap { TransferHarness.json(String($0)) }
                .filter { $0["event"] as? String == "folder" }.compactMap { $0["name"] as? String }
            #expect(folders == expected)
        }

        /// A receiver never follows a symbolic link to create an offered folder: a link planted where the folder
        /// goes stays a link and nothing is created where it points.
        @Test func anEmptyFolderIsNeverCreatedThroughASymbolicLinkAtTheReceiver() async throws {
            let harness = try TransferHarness()
            let album = harness.source.path + "/album"
            let manager = FileManager.default
            try manager.createDirectory(atPath: album + "/deep/inner", withIntermediateDirectories: true)
            try Data(repeating: 1, count: 10).write(to: URL(fileURLWithPath: album + "/a.bin"))
            let outside = harness.source.path + "/outside"
            try manager.createDirectory(atPath: outside, withIntermediateDirectories: true)
            try manager.createDirectory(atPath: harness.inbox.path + "/album", withIntermediateDirectories: true)
            try manager.createSymbolicLink(atPath: harness.inbox.path + "/album/deep", withDestinationPath: outside)
            let (receiver, port) = try harness.receiver(accept: "all", once: true)
            let sent = try harness.send([album], to: [port])
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            #expect(sent.status == 0)
            #expect(try manager.contentsOfDirectory(atPath: outside).isEmpty)
            let finished = receiver.allStdoutLines.compactMap(TransferHarness.json).last {
                $0["event"] as? String == "finished"
            }
            #expect(finished?["emptyFoldersFailed"] as? Int == 1, "\(receiver.capturedOutput())")
        }
    }
}
