import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

/// The bound between a link's reader and the transfer engine (docs/SECURITY.md promise 4, issue 27 point 4): while
/// the engine does not take a peer's frames (busy with one, or behind a stalled disk), the reader of that peer's link
/// stops once `transferBacklogLimit` bytes wait, so the frames the peer goes on sending wait in TCP, not in memory;
/// nothing is lost, and reading goes on as the engine takes them.
@Suite(.timeLimit(.minutes(2))) struct TransferBacklogTests {
    static let frameSize = 1 << 20
    static let limit = 4 << 20

    static func configuration(_ name: String) -> SessionConfiguration {
        var configuration = SessionTests.configuration(name)
        configuration.transfersEnabled = true
        configuration.transferBacklogLimit = limit
        return configuration
    }

    @Test func aPeerWhoseFramesTheEngineDoesNotTakeIsNotReadPastTheLimitAndLosesNothing() async throws {
        try await SessionTests.withPair(bob: Self.configuration("bob"), alice: Self.configuration("alice")) {
            bob, alice in
            let info = try await alice.connect(toAddress: await SessionTests.address(of: bob), timeout: .seconds(30))
            // Nobody takes bob's transfer frames yet: 40 frames of 1 MiB, ten times the limit, sent without waiting
            // for anything but room in alice's own writer.
            let count = 40
            let sending = Task {
                for index in 0..<count {
                    var payload = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: Self.frameSize)
                    payload[0] = UInt8(index)
                    let frame = Frame(kind: FrameKind(rawValue: 0x01F0), payload: payload)
                    try await alice.sendTransferFrame([frame.encoded()], to: info.peerID)
                }
            }
            // Either bob's reader stopped for the backlog or (without the bound) it read everything alice sent.
            try await SwarmLinkTests.waitUntil("bob stops reading or reads everything") {
                bob.transferBacklogPauses > 0 || bob.largestTransferBacklog >= count * (Self.frameSize + 6)
            }
            let largest = bob.largestTransferBacklog
            #expect(bob.transferBacklogPauses > 0, "bob's reader never stopped")
            #expect(largest <= Self.limit + Self.frameSize + Frame.headerLength, "\(largest) bytes waited")
            // Control: the backlog did fill up to the limit (alice really sent faster than anyone took).
            #expect(largest > Self.limit - Self.frameSize, "\(largest) bytes waited")

            // The engine catches up: every frame arrives, in order, and alice's sends all complete.
            var received = 0
            for await event in bob.transferEvents {
                guard case .frame(let frame, let from) = event else { continue }
                #expect(from == alice.localPeerID && frame.payload.count == Self.frameSize)
                #expect(frame.payload.first == UInt8(received), "frame \(received) out of order")
                received += 1
                if received == count { break }
            }
            try await sending.value
            #expect(received == count)
            #expect(bob.largestTransferBacklog <= Self.limit + Self.frameSize + Frame.headerLength)
        }
    }
}
