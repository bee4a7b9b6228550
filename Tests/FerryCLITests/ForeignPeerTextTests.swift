import FerryWire
import Testing

@testable import FerryCLI
@testable import FerrySession
@testable import FerryTransfer

/// A file from a peer of another protocol (a LocalSend app): its lines say which protocol the peer speaks, and a
/// file its sender gave no digest of says it was checked by its size only.
@Suite struct ForeignPeerTextTests {
    static let phone = PeerInfo(
        peerID: PeerID(rawValue: PeerID.firstForeign + 5), deviceID: DeviceID(bytes: [UInt8](repeating: 9, count: 32))!,
        displayName: "Pixel", mode: .peer, address: nil, isDiscovered: false, isAcceptingConnections: false,
        state: .connected, protocolName: "localsend")

    static func outcome(_ verification: FileVerification, peer: PeerInfo = phone) -> FileOutcome {
        var outcome = FileOutcome(
            transferID: TransferID(bytes: [UInt8](repeating: 3, count: 16))!, peer: peer, direction: .receiving,
            fileIndex: 0, fileName: "photo.jpg", size: 2048, publishedName: "photo.jpg", failure: nil,
            resumedBytes: 0)
        outcome.verification = verification
        return outcome
    }

    @Test func aFileCheckedBySizeOnlySaysSo() {
        #expect(
            TransferReporter.text(for: Self.outcome(.size))
                == "received photo.jpg from Pixel (2.0 KiB), checked by its size only: the sender gave no digest")
        #expect(TransferReporter.text(for: Self.outcome(.sha256)) == "received photo.jpg from Pixel (2.0 KiB)")
    }

    @Test func jsonNamesTheProtocolAndTheCheckOnlyForAForeignPeer() {
        let size = TransferReporter.jsonLine(for: .fileFinished(Self.outcome(.size))).text
        #expect(size.contains(#""protocol":"localsend""#), "\(size)")
        #expect(size.contains(#""verification":"size""#), "\(size)")
        #expect(
            TransferReporter.jsonLine(for: .fileFinished(Self.outcome(.sha256))).text.contains(
                #""verification":"sha256""#))
        let ferry = TransferReporter.jsonLine(
            for: .fileFinished(Self.outcome(.fileDigest, peer: AlreadyThereTextTests.peer))
        ).text
        #expect(!ferry.contains("protocol") && !ferry.contains("verification"), "\(ferry)")
    }
}
