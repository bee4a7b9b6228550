import FerryWire
import Testing

@testable import FerryCLI
@testable import FerrySession
@testable import FerryTransfer

/// Issue 28, 4: a text sent with `--text` is a message, not a file, wherever a person reads about it: the sender's
/// line for it, the summary's count, the receiver's offer; in JSON the `file` event and the summary say which
/// entry was the text.
@Suite struct SentMessageTextTests {
    static let peer = PeerInfo(
        peerID: PeerID(rawValue: 0x42), deviceID: DeviceID(bytes: [UInt8](repeating: 7, count: 32))!,
        displayName: "alice", mode: .peer, address: nil, isDiscovered: true, isAcceptingConnections: true,
        state: .connected)

    static func outcome(_ name: String, size: UInt64, mediaType: String, failure: String? = nil) -> FileOutcome {
        FileOutcome(
            transferID: TransferID(bytes: [UInt8](repeating: 3, count: 16))!, peer: peer, direction: .sending,
            fileIndex: 0, fileName: name, size: size, publishedName: failure == nil ? name : nil, failure: failure,
            resumedBytes: 0, mediaType: mediaType)
    }

    static let text = outcome("message.txt", size: 21, mediaType: Payload.messageMediaType)

    @Test func theSendersLineForATextSaysMessageNotItsFileName() {
        #expect(TransferReporter.text(for: Self.text) == "sent a message to alice")
        let failed = Self.outcome("message.txt", size: 21, mediaType: Payload.messageMediaType, failure: "link lost")
        #expect(TransferReporter.text(for: failed) == "failed to send the message to alice: link lost")
        var lost = failed
        lost.direction = .receiving
        #expect(TransferReporter.text(for: lost) == "failed to receive the message from alice: link lost")
        // A file that happens to be called message.txt is still a file.
        let file = Self.outcome("message.txt", size: 21, mediaType: "text/plain")
        #expect(TransferReporter.text(for: file) == "sent message.txt to alice (21 B)")
    }

    @Test func theSummaryCountsATextApartFromTheFiles() {
        let ok = TransferSummary.PeerResult(
            name: "alice", peerID: "01", filesSucceeded: 2, bytes: 1045, wireBytes: 1045)
        let both = TransferSummary(files: 2, messages: 1, bytes: 1045, seconds: 1, peers: [ok])
        #expect(both.text.hasPrefix("sent 1 file and a message (1.0 KiB) to 1 peer in 1.0 s"), "\(both.text)")
        let alone = TransferSummary(files: 1, messages: 1, bytes: 21, seconds: 1, peers: [ok])
        #expect(alone.text.hasPrefix("sent a message (21 B) to 1 peer in 1.0 s"), "\(alone.text)")
        let files = TransferSummary(files: 2, bytes: 1045, seconds: 1, peers: [ok])
        #expect(files.text.hasPrefix("sent 2 files (1.0 KiB) to 1 peer"), "\(files.text)")
        // JSON: `files` counts every entry as before; `messages` says how many of them were texts.
        #expect(both.jsonLine.text.contains(#""files":2,"#), "\(both.jsonLine.text)")
        #expect(both.jsonLine.text.hasSuffix(#","messages":1}"#), "\(both.jsonLine.text)")
    }

    @Test func theFileEventSaysWhetherTheEntryWasTheText() {
        let text = TransferReporter.jsonLine(for: .fileFinished(Self.text)).text
        #expect(text.hasSuffix(#","message":true}"#), "\(text)")
        let file = TransferReporter.jsonLine(
            for: .fileFinished(Self.outcome("a.jpg", size: 9, mediaType: "image/jpeg")))
        #expect(file.text.hasSuffix(#","message":false}"#), "\(file.text)")
    }

    @Test func theReceiversOfferCountsAndListsATextApart() {
        let photo = OfferedFile(
            path: "photo.jpg", size: 1024, permissions: 0o644, modificationTime: FileTime(seconds: 0, nanoseconds: 0),
            mediaType: "image/jpeg", pixelWidth: 0, pixelHeight: 0)
        var message = photo
        message.path = "message.txt"
        message.size = 21
        message.mediaType = Payload.messageMediaType
        let lines = OfferPrompt.text(sender: "alice", files: [photo, message], totalBytes: 1045)
        #expect(
            lines == [
                "alice offers 1 file and a message (1.0 KiB):", "  photo.jpg  1.0 KiB", "  a message  21 B",
                "Accept? [y/N]",
            ])
        let alone = OfferPrompt.text(sender: "alice", files: [message], totalBytes: 21)
        #expect(alone.first == "alice offers a message (21 B):")
    }

    /// The sender picks an entry's media type: one marked a message under a name `--text` never gives (it may be kept
    /// under that name) is shown with its name, so a person does not accept "a message" and find `.bashrc` kept.
    @Test func aMessageUnderANameFerryDoesNotGiveShowsTheName() {
        var message = OfferedFile(
            path: ".bashrc", size: 21, permissions: 0o644, modificationTime: FileTime(seconds: 0, nanoseconds: 0),
            mediaType: Payload.messageMediaType, pixelWidth: 0, pixelHeight: 0)
        #expect(
            OfferPrompt.text(sender: "alice", files: [message], totalBytes: 21)[1]
                == "  a message, kept as .bashrc  21 B")
        message.path = "message (2).txt"
        #expect(OfferPrompt.text(sender: "alice", files: [message], totalBytes: 21)[1] == "  a message  21 B")
    }
}
