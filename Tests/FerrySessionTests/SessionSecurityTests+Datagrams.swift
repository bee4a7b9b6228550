import FerrySecurity
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// Sealed datagrams (PROTOCOL 5 and 10.7): real packets of a real link, captured and handed to the receiver again,
/// changed, forged, or sent from elsewhere.
extension SessionSecurityTests {
    @Test(.timeLimit(.minutes(1)))
    func datagramsOpenOnlyWithTheLinkKeyAndAreTakenOnce() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            let bobEvents = EventReader(bob)
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                let aliceEvents = EventReader(alice)
                let bobID = try await alice.connect(toAddress: address).peerID
                let aliceID = alice.localPeerID
                // A real exchange both ways; on loopback one datagram arrives.
                try await alice.send([1, 2, 3], to: [bobID], mode: .unreliable)
                let (toBob, bobMode) = try await bobEvents.nextData()
                #expect(toBob == [1, 2, 3] && bobMode == .unreliable)
                try await bob.send([4, 5, 6], to: [aliceID], mode: .unreliable)
                let (toAlice, aliceMode) = try await aliceEvents.nextData()
                #expect(toAlice == [4, 5, 6] && aliceMode == .unreliable)

                // Capture what Alice seals for Bob on a socket of our own: sequence 2...81, payload [sequence - 2].
                let tap = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
                defer { tap.close() }
                await alice.redirectDatagrams(of: bobID, to: tap.localAddress)
                var captured: [UInt64: [UInt8]] = [:]
                for index in 0..<80 {
                    try await alice.send([UInt8(index)], to: [bobID], mode: .unreliable)
                    let packet = try await tap.receive().bytes
                    captured[try Datagram(decoding: packet[...]).sequence] = packet
                }
                #expect(captured.keys.sorted() == Array(2...81))
                func packet(_ sequence: UInt64) -> [UInt8] { captured[sequence] ?? [] }
                func changed(_ sequence: UInt64, at index: Int) -> [UInt8] {
                    var bytes = packet(sequence)
                    bytes[index < 0 ? bytes.count + index : index] ^= 0x01
                    return bytes
                }

                let home = SocketAddress.ipv4(.loopback, port: 1)  // Alice's IP address; the port is not checked
                let before = await bob.statistics
                var expected: [UInt8] = []
                func arrive(_ bytes: [UInt8], from source: SocketAddress = home) async {
                    await bob.datagramArrived(bytes, from: source)
                }

                // Taken once; again is a replay.
                await arrive(packet(2))
                expected.append(0)
                await arrive(packet(2))
                // Out of order within the window: each taken once.
                for sequence: UInt64 in [7, 5, 6, 3, 4] {
                    await arrive(packet(sequence))
                    expected.append(UInt8(sequence - 2))
                }
                for sequence: UInt64 in 3...7 { await arrive(packet(sequence)) }

                // Forged or changed: none opens, none uses up sequence 8.
                let tag = Datagram.sessionTag(for: "unit")
                let header = Datagram.header(sessionTag: tag, sender: aliceID, sequence: 8)
                await arrive(header + (0..<40).map { _ in UInt8.random(in: 0...255) })
                await arrive(changed(8, at: 3))  // flags
                await arrive(changed(8, at: 23))  // sequence 8 becomes 9: another nonce
                await arrive(changed(8, at: -1))  // the tag
                await arrive(changed(8, at: Datagram.headerLength))  // the ciphertext
                // Sealed with the key of the other direction (what Bob sends to Alice).
                let bobSends = try #require(await bob.peers[aliceID]?.datagrams?.send)
                await arrive(header + (try #require(bobSends.seal([8], header: header, sequence: 8))))
                await arrive(packet(8))
                expected.append(6)

                // Not from a connected peer of this session: dropped before any key is tried.
                await arrive(changed(9, at: 4))  // another session tag
                await arrive(changed(9, at: 8))  // another sender
                await arrive(packet(9), from: .ipv4(IPv4Address(127, 0, 0, 2), port: 1))  // another host
                await arrive(Array(packet(9).prefix(Datagram.headerLength + Datagram.tagLength - 1)))
                await arrive(packet(9))
                expected.append(7)

                // The window's edge: 64 below the highest is too old to tell, 63 below is fresh.
                await arrive(packet(81))
                expected.append(79)
                await arrive(packet(17))
                await arrive(packet(18))
                expected.append(16)
                await arrive(packet(80))
                expected.append(78)

                let after = await bob.statistics
                #expect(after.datagramsReplayed - before.datagramsReplayed == 7)  // 1 + 5 + the one too old
                #expect(after.datagramsForged - before.datagramsForged == 6)
                #expect(after.datagramsDropped - before.datagramsDropped == 4)
                // Delivered exactly these, in this order, all from Alice; the last one marks the end.
                var received: [UInt8] = []
                while received.last != expected.last {
                    let event = try await bobEvents.next { if case .dataReceived = $0 { true } else { false } }
                    guard case .dataReceived(let bytes, let from, let mode) = event else { continue }
                    #expect(from.peerID == aliceID && mode == .unreliable && bytes.count == 1)
                    received += bytes
                }
                #expect(received == expected)
            }
        }
    }
}
