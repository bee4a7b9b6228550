import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

extension SwarmRelayerTests {
    /// A `swarmHave` costs a member nothing before its sender and its ranges are checked (issue 27 point 3: one
    /// frame of 1024 overlapping ranges was expanded chunk by chunk, and walked twice, before anything looked at its
    /// sender). Mallory is named in the offer of a 16 GiB file but left out by the sender's latest list: her 1024
    /// ranges over the whole file make alice's fetcher merge no word at all. A range past the file's end is a
    /// protocol error: her link is closed, still without any work.
    @Test func aSwarmHaveOfAMemberLeftOutOrPastTheFileIsRejectedBeforeAnyWork() async throws {
        let chunks = 1 << 18
        let data = TestFiles.randomBytes(count: Self.chunk, seed: 64)
        try await SwarmMemberTests.withSessions(["alice", "mallory", "sam"], inbox: "swarm-have") { sessions, inbox in
            let (alice, mallory, sam) = (sessions[0], sessions[1], sessions[2])
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: alice, configuration: config) { engine in
                let port = await alice.listenPort
                let toAlice = try await sam.connect(toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                let members = [
                    SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(port)"),
                    SwarmMember(deviceID: mallory.configuration.deviceID, address: ""),
                ]
                let offer = SwarmMemberTests.swarmOffer(sender, size: chunks * Self.chunk, members: members)
                try await sender.send(.offer(offer), to: 0)
                let seen = SwarmMemberTests.Seen()
                let seeded = SwarmMemberTests.Step()
                // The lists name mallory, then leave her out; alice's acknowledgement of the chunk after them says
                // she has read both.
                let stored = await sender.collect { member, message in
                    seen.record(member, message)
                    return seen.read { $0.acks[0]?.count == 1 }
                } onEach: {
                    guard seen.read({ $0.replies.count == 1 }), seeded.once() else { return }
                    #expect(seen.read { $0.replies[0]?.relay } == true)
                    for list in [[0, 1], [0]] as [[UInt16]] {
                        try await sender.send(
                            .swarmMembers(SwarmMembers(transferID: sender.transferID, members: list)), to: 0)
                    }
                    let digests = ChunkDigests(
                        transferID: sender.transferID, fileIndex: 0, firstChunk: 0,
                        entries: [ChunkDigests.Entry(seed: 0, sha256: FileDigest.chunkDigest(data))])
                    try await sender.send(.chunkDigests(digests), to: 0)
                    try await sender.sendChunk(data, index: 0, to: 0)
                }
                #expect(stored, "alice stored the chunk the sender seeded to her")
                // Mallory links up with alice (alice vouched for every member of the offer) and announces.
                _ = await mallory.vouch(for: [alice.configuration.deviceID], reason: "test")
                let link = try await mallory.connect(
                    toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let overlapping = (0..<Limits.maxSwarmEntriesPerFrame).map { UInt64($0)..<UInt64(chunks - $0) }
                let past = [UInt64(0)..<UInt64(chunks + 1)]
                for ranges in [overlapping, past] {
                    let have = SwarmHave(swarmID: sender.swarmID, fileIndex: 0, ranges: ranges)
                    try await mallory.sendTransferFrame(
                        [TransferMessage.swarmHave(have).frame.encoded()], to: link.peerID)
                }
                #expect(
                    await HostileSender(session: mallory, receiver: link.peerID).linkClosed(),
                    "a range past the file's end closed mallory's link")
                let words = await engine.memberSwarm(sender.swarmID)?.fetcher.announcementWords
                #expect(words == 0, "alice did no work for either frame")
            }
        }
    }
}
