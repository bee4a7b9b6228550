import Dispatch
import Foundation
import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerryTransfer

/// Several transfers at once from one sender to one receiver (the library allows it): each keeps its own window, and
/// together they keep what is unacknowledged to that peer within `maxInFlightPerPeer`, under the 64 MiB a receiver
/// queues from one sender before it closes the link (PROTOCOL.md 11.10 rule 6).
@Suite(.serialized, .timeLimit(.minutes(3))) struct PeerWindowTests {
    /// Three sends of 40 MiB, each with a 32 MiB window (96 MiB together), to a receiver whose disk stalls: the
    /// receiver queues what arrives and acknowledges nothing. The sender stops at 48 MiB unacknowledged; when the
    /// disk comes back every file arrives. Without the bound over the peer's transfers (broken on purpose once) the
    /// sender had 77 MiB unacknowledged and the receiver queued 63 MiB, a chunk short of closing the link.
    @Test func threeTransfersToOnePeerStayWithinWhatTheReceiverQueues() async throws {
        let size = 40 << 20
        try await TemporaryDirectory.with(prefix: "peer-window-src") { source in
            try await TemporaryDirectory.with(prefix: "peer-window-in") { inbox in
                let files = TestFiles(in: source)
                let sources = try (0..<3).map { index in
                    let url = try files.random("big\(index).bin", size: size, seed: UInt64(70 + index))
                    return SourceFile(path: url.path, name: "big\(index).bin")
                }
                let reactor = try Reactor()
                defer { reactor.shutdown() }
                try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) {
                    bob in
                    try await Session.run(configuration: TransferEngineTests.configuration("alice"), reactor: reactor) {
                        alice in
                        let receiving = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
                        let sending = TransferConfiguration(window: 32 << 20, compression: .none)
                        try await TransferEngine.run(session: bob, configuration: receiving) { receiver in
                            try await TransferEngine.run(session: alice, configuration: sending) { sender in
                                let info = try await alice.connect(
                                    toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                                // The receiver's disk stalls: every chunk that arrives stays queued, unacknowledged.
                                let gate = DispatchSemaphore(value: 0)
                                await receiver.io.submit { gate.wait() }
                                var opened = false
                                defer { if !opened { gate.signal() } }
                                let sends = sources.map { file in
                                    Task { try await sender.send([file], to: [info.peerID]).first }
                                }
                                // Until the sender has sent all it may: 48 MiB queued at the receiver (or the link
                                // closed, without the bound). A bound on the wait, not a sleep that synchronises.
                                let deadline = ContinuousClock.now + .seconds(120)
                                while ContinuousClock.now < deadline {
                                    let queued = await receiver.probe.largestQueuedBytes
                                    let closed = await alice.peer(info.peerID)?.state != .connected
                                    if queued >= OutgoingOperations.maxInFlightPerPeer || closed { break }
                                    try await Task.sleep(for: .milliseconds(20))
                                }
                                #expect(
                                    await receiver.probe.largestQueuedBytes >= OutgoingOperations.maxInFlightPerPeer)
                                gate.signal()
                                opened = true
                                for (index, send) in sends.enumerated() {
                                    let outcome = try await send.value
                                    #expect(outcome?.isSuccess == true, "send \(index): \(String(describing: outcome))")
                                }
                                let largest = await sender.probe.largestInFlightPerPeer
                                #expect(largest <= OutgoingOperations.maxInFlightPerPeer, "\(largest) bytes in flight")
                                let queued = await receiver.probe.largestQueuedBytes
                                #expect(queued <= OutgoingOperations.maxInFlightPerPeer, "\(queued) bytes queued")
                            }
                        }
                    }
                }
                for file in sources {
                    #expect(
                        try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/" + file.name))
                            == Data(contentsOf: URL(fileURLWithPath: file.path)), "\(file.name)")
                }
            }
        }
    }
}
