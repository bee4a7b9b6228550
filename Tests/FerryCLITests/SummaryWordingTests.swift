import Testing

@testable import FerryCLI

/// Issue 28, 16: the summary's wording. `in 0.0 s (202 MiB/s)`, `(1.0 copies)`, `already there (identical) (2.7
/// MiB)` and `(0 files already there are not sent)` were each read wrong by a new user.
@Suite struct SummaryWordingTests {
    static let alice = TransferSummary.PeerResult(
        name: "alice", peerID: "01", filesSucceeded: 1, bytes: 20_480, wireBytes: 20_480)

    @Test func aTimeThatRoundsToZeroIsUnderATenthAndGivesNoRate() {
        let quick = TransferSummary(files: 1, bytes: 20_480, seconds: 0.0001, peers: [Self.alice])
        #expect(quick.text == "sent 1 file (20.0 KiB) to 1 peer in under 0.1 s\n  alice: ok\n", "\(quick.text)")
        let tenth = TransferSummary(files: 1, bytes: 20_480, seconds: 0.1, peers: [Self.alice])
        #expect(tenth.text.hasPrefix("sent 1 file (20.0 KiB) to 1 peer in 0.1 s (200 KiB/s)\n"), "\(tenth.text)")
        // Compression is still said without a rate.
        var packed = Self.alice
        packed.wireBytes = 2048
        let small = TransferSummary(files: 1, bytes: 20_480, seconds: 0.01, peers: [packed])
        #expect(small.text.hasPrefix("sent 1 file (20.0 KiB) to 1 peer in under 0.1 s (compression 10.00x)\n"))
    }

    @Test func theBroadcastLineSaysTheSendersBytesAsTimesTheSizeNotAsCopies() {
        var bob = Self.alice
        bob.name = "bob"
        bob.relayedBytes = 10_240
        bob.chunkBytes = 10_240
        var first = Self.alice
        first.chunkBytes = 20_480
        let one = TransferSummary(files: 1, bytes: 20_480, seconds: 1, peers: [first, bob])
        #expect(
            one.broadcastLine == "broadcast: 30.0 KiB sent from here (1.5x the file's size), 10.0 KiB relayed by the"
                + " receivers", "\(one.broadcastLine ?? "nil")")
        let two = TransferSummary(files: 2, bytes: 20_480, seconds: 1, peers: [first, bob])
        #expect(two.broadcastLine?.contains("(1.5x the files' size)") == true)
        #expect(!one.text.contains("copies"))
    }

    @Test func alreadyThereHasOneParenthesis() {
        var held = Self.alice
        held.filesAlreadyThere = 1
        let summary = TransferSummary(files: 1, bytes: 20_480, seconds: 1, peers: [held])
        #expect(summary.text.contains("  alice: ok (1 file already there, identical)\n"), "\(summary.text)")
        #expect(!summary.text.contains(") ("))
    }
}
