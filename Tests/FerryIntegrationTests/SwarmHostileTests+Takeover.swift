import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

extension IntegrationTests.SwarmHostileTests {
    /// Issue 27's campaign against a member: a second sender Alice accepts (Eve, told the swarm ID by Mallory, a
    /// co-member) offers her a file with the swarm ID of the broadcast she is in (a real `ferry send` to Alice, Bob and
    /// Mallory; Mallory holds the broadcast open, so Alice's swarm is surely live). Alice takes Eve's offer as a plain
    /// transfer (no `relay`) and publishes it, and the broadcast reaches Alice and Bob whole. (Before, Eve's offer
    /// replaced Alice's swarm: the sender's next `chunkDigests` was a protocol violation and its link was closed.)
    @Test func aSecondSenderReusingALiveSwarmIDIsTakenPlainAndTheBroadcastStaysWhole() async throws {
        let transfer = try await onOwnThread { try TransferHarness() }
        let aliceInbox = try TemporaryDirectory(prefix: "ferry-swarm-alice")
        defer { aliceInbox.remove() }
        let bobInbox = try TemporaryDirectory(prefix: "ferry-swarm-bob")
        defer { bobInbox.remove() }
        let (alice, alicePort) = try transfer.receiver("alice", into: aliceInbox.path, once: false)
        let (bob, bobPort) = try transfer.receiver("bob", into: bobInbox.path)
        let file = try transfer.files.random("swarm.bin", size: 64 << 20)
        let small = [UInt8](repeating: 0x45, count: 1000)
        let holder = HostileSwarmMember.Behaviour(flipBytes: false, holdsResults: true)
        try await HostileSwarmMember.run(sessionID: transfer.session, name: "mallory", behaviour: holder) { mallory in
            try await HostileSwarmMember.run(sessionID: transfer.session, name: "eve", behaviour: .honest) { eve in
                let port = Int(await mallory.port)
                _ = try transfer.sender([file.path], to: [alicePort, bobPort, port], ["--compress", "none"])
                let offered = await mallory.waitFor { if case .offer = $0 { true } else { false } }
                guard case .offer(let offer, _)? = offered, let swarm = offer.swarm else {
                    Issue.record("Mallory had no offer with a swarm")
                    return
                }
                let aliceMember = try #require(swarm.members.first { $0.address == "127.0.0.1:\(alicePort)" })
                // Alice accepted the broadcast: she is in its swarm, and stays while Mallory holds it open.
                try await onOwnThread {
                    _ = try alice.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "started" }
                }
                let toAlice = try await eve.connect(toPort: alicePort)
                let transferID = TransferID.random()
                let reuse = Offer(
                    transferID: transferID, chunkSize: UInt32(Limits.minChunkSize), codecs: [],
                    files: [
                        OfferedFile(
                            path: "eve.bin", size: UInt64(small.count),
                            modificationTime: FileTime(seconds: 0, nanoseconds: 0))
                    ],
                    swarm: Swarm(
                        swarmID: swarm.swarmID,
                        members: [aliceMember, SwarmMember(deviceID: eve.deviceID, address: "")]))
                try await eve.session.sendTransferFrame([TransferMessage.offer(reuse).encoded()], to: toAlice)
                let replied = await eve.waitFor {
                    if case .message(.offerReply, toAlice, _) = $0 { true } else { false }
                }
                guard case .message(.offerReply(let reply), _, _)? = replied else {
                    Issue.record("Alice did not answer Eve's offer: \(alice.capturedOutput())")
                    return
                }
                #expect(reply.accepted && !reply.relay, "Eve's offer is taken without the swarm: \(reply)")
                let header = Chunk.frameHeader(
                    transferID: transferID, fileIndex: 0, offset: 0, rawLength: UInt32(small.count), codec: .none,
                    sha256: FileDigest.chunkDigest(small), dataLength: small.count)
                try await eve.session.sendTransferFrame([header, small], to: toAlice)
                let end = FileEnd(
                    transferID: transferID, fileIndex: 0, digest: FileDigest.of(small, chunkSize: Limits.minChunkSize))
                try await eve.session.sendTransferFrame([TransferMessage.fileEnd(end).encoded()], to: toAlice)
                let resulted = await eve.waitFor {
                    if case .message(.fileResult, toAlice, _) = $0 { true } else { false }
                }
                guard case .message(.fileResult(let result), _, _)? = resulted else {
                    Issue.record("Alice sent Eve no result: \(alice.capturedOutput())")
                    return
                }
                #expect(result.status == .published, "Eve's file arrives as a plain transfer: \(result)")

                // The broadcast reaches Alice and Bob whole.
                let finished = try await onOwnThread { () -> String in
                    let line = try alice.nextJSON(timeout: .seconds(240)) {
                        $0["event"] as? String == "finished" && $0["peer"] as? String == "outbox"
                    }
                    return line["ok"] as? Bool == true ? "ok" : "\(line)"
                }
                #expect(finished == "ok", "Alice's broadcast ended whole")
                #expect(try await bob.exitStatus(timeout: .seconds(240)) == 0, "\(bob.capturedOutput())")
                #expect(
                    SwarmHarness.identical(aliceInbox.path + "/swarm.bin", file.path), "\(alice.capturedOutput())")
                #expect(SwarmHarness.identical(bobInbox.path + "/swarm.bin", file.path), "\(bob.capturedOutput())")
                let eveFile = try [UInt8](Data(contentsOf: URL(fileURLWithPath: aliceInbox.path + "/eve.bin")))
                #expect(eveFile == small)
                try alice.terminate()
            }
        }
    }
}
