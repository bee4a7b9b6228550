import FerryWire
import Testing

@testable import FerryCLI
@testable import FerrySession
@testable import FerryTransfer

/// A file the receiver already held byte for byte: the per-file lines, the summary and its JSON say
/// "already there (identical)".
@Suite struct AlreadyThereTextTests {
    static let peer = PeerInfo(
        peerID: PeerID(rawValue: 0x42), deviceID: DeviceID(bytes: [UInt8](repeating: 7, count: 32))!,
        displayName: "bob", mode: .peer, address: nil, isDiscovered: true, isAcceptingConnections: true,
        state: .connected)

    static func outcome(_ direction: TransferDirection, held: String = "photo.jpg") -> FileOutcome {
        FileOutcome(
            transferID: TransferID(bytes: [UInt8](repeating: 3, count: 16))!, peer: peer, direction: direction,
            fileIndex: 0, fileName: "photo.jpg", size: 2048, publishedName: held, failure: nil, resumedBytes: 0,
            alreadyThere: true)
    }

    @Test func fileLines() {
        #expect(
            TransferReporter.text(for: Self.outcome(.sending))
                == "photo.jpg: already there at bob (identical, 2.0 KiB)")
        #expect(
            TransferReporter.text(for: Self.outcome(.receiving, held: "photo (1).jpg"))
                == "photo.jpg from bob: already there as photo (1).jpg (identical, 2.0 KiB)")
        var published = Self.outcome(.sending)
        published.alreadyThere = false
        #expect(TransferReporter.text(for: published) == "sent photo.jpg to bob (2.0 KiB)")
    }

    @Test func summary() {
        let summary = TransferSummary(
            files: 2, bytes: 4096, seconds: 1,
            peers: [
                .init(name: "bob", peerID: "01", filesSucceeded: 2, bytes: 4096, wireBytes: 4096, filesAlreadyThere: 1)
            ])
        #expect(summary.isSuccess)
        #expect(summary.text.contains("  bob: ok (1 file already there, identical)\n"), "\(summary.text)")
        #expect(summary.jsonLine.text.contains(#""failure":null,"filesAlreadyThere":1}"#), "\(summary.jsonLine.text)")
    }
}
