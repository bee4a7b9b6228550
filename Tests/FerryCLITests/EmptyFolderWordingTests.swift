import FerryWire
import Testing

@testable import FerryCLI
@testable import FerrySession
@testable import FerryTransfer

/// Issue 28, 6: the empty folders of a folder sent are counted apart from its files, on both sides.
@Suite struct EmptyFolderWordingTests {
    @Test func theSendersSummaryCountsEmptyFoldersApartFromFiles() {
        let alice = TransferSummary.PeerResult(name: "alice", peerID: "01", filesSucceeded: 3, bytes: 30, wireBytes: 30)
        var summary = TransferSummary(files: 3, bytes: 30, seconds: 1, peers: [alice])
        summary.emptyFolders = 2
        #expect(summary.text.hasPrefix("sent 3 files and 2 empty folders (30 B) to 1 peer"), "\(summary.text)")
        #expect(
            !TransferSummary(files: 3, bytes: 30, seconds: 1, peers: [alice]).jsonLine.text.contains("emptyFolders"))
        #expect(summary.jsonLine.text.hasSuffix(",\"messages\":0,\"emptyFolders\":2}"), "\(summary.jsonLine.text)")
        #expect(
            TransferSummary.entries(files: 1, messages: 1, emptyFolders: 1) == "1 file, 1 empty folder and a message")
        #expect(TransferSummary.entries(files: 2, messages: 0) == "2 files")
        #expect(TransferSummary.entries(files: 0, messages: 1) == "a message")
    }

    @Test func theReceiverSaysWhichEmptyFoldersItCreatedAndWhichNot() {
        let peer = AlreadyThereTextTests.peer
        var outcome = TransferOutcome(
            transferID: TransferID(bytes: [UInt8](repeating: 3, count: 16))!, peer: peer, direction: .receiving,
            filesSucceeded: 1, filesFailed: 0, filesSkipped: 0, bytes: 1, wireBytes: 1, chunkBytes: 1,
            resumedBytes: 0, duration: .seconds(1), failure: nil)
        #expect(TransferReporter.foldersText(for: outcome) == nil)
        outcome.emptyFolders = 2
        #expect(TransferReporter.foldersText(for: outcome) == "created 2 empty folders from bob")
        outcome.emptyFoldersFailed = 1
        #expect(
            TransferReporter.foldersText(for: outcome)
                == "created 2 empty folders from bob; 1 empty folder from bob could not be created (a file or a "
                + "symbolic link is in the way; -v shows where)")
        outcome.direction = .sending
        #expect(TransferReporter.foldersText(for: outcome) == nil)
    }

    /// `--as NAME` renames the empty folders of the one folder sent as it renames its files.
    @Test func asRenamesTheEmptyFoldersOfTheFolderSent() throws {
        let sources = [SourceFile(path: "/x/DCIM/a.jpg", name: "DCIM/a.jpg")]
        #expect(
            try SendCommand.renamed(["DCIM/empty", "DCIM/deep/er"], of: sources, as: "holiday")
                == ["holiday/empty", "holiday/deep/er"])
        #expect(throws: CLIError.self) { try SendCommand.renamed(["DCIM/empty"], of: sources, as: "..") }
    }
}

/// Issue 28, 6: a newer version from `ferry watch` says that it replaced the version before.
@Suite struct ReplacedFileWordingTests {
    @Test func aReplacedFileSaysSoOnTheReceivingSide() {
        var outcome = AlreadyThereTextTests.outcome(.receiving, held: "slow.txt")
        outcome.alreadyThere = false
        outcome.fileName = "slow.txt"
        #expect(TransferReporter.text(for: outcome) == "received slow.txt from bob (2.0 KiB)")
        outcome.replaced = true
        #expect(
            TransferReporter.text(for: outcome)
                == "received slow.txt from bob (2.0 KiB), replacing the version bob sent before")
    }
}
