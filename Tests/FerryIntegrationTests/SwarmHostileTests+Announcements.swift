import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

extension IntegrationTests.SwarmHostileTests {
    /// Issue 27's campaign against a member, with a real `ferry receive` (Alice) as the victim: Sam offers her a
    /// 16 GiB file (never sent) with a swarm of Alice and Mallory; Mallory, a listed member, sends her 200
    /// `swarmHave` frames of 1024 overlapping ranges over the whole file (before, one such frame grew a member past
    /// 1 GiB in 1.2 s, and an ordinary 1 KiB send to it never landed meanwhile). An ordinary `ferry send` of 1 KiB,
    /// started as the frames go out, lands; Alice's peak memory stays small; a last frame with a range past the
    /// file's end closes Mallory's link (so every frame before it was read).
    @Test func announcementsOverAHugeOfferLeaveTheMemberSmallAndAnOrdinarySendLands() async throws {
        let transfer = try await onOwnThread { try TransferHarness() }
        let (alice, port) = try transfer.receiver("alice", once: false)
        let small = try transfer.files.random("small.bin", size: 1024)
        let chunkSize = Limits.minChunkSize
        let chunks = 1 << 18  // 16 GiB of 64 KiB chunks
        try await HostileSwarmMember.run(sessionID: transfer.session, name: "sam", behaviour: .honest) { sam in
            try await HostileSwarmMember.run(sessionID: transfer.session, name: "mallory", behaviour: .honest) {
                mallory in
                let toAlice = try await sam.connect(toPort: port)
                let aliceID = try #require(await sam.session.peer(toAlice)?.deviceID)
                let swarmID = SwarmID.random()
                let transferID = TransferID.random()
                let offer = Offer(
                    transferID: transferID, chunkSize: UInt32(chunkSize), codecs: [],
                    files: [
                        OfferedFile(
                            path: "big.bin", size: UInt64(chunks) * UInt64(chunkSize),
                            modificationTime: FileTime(seconds: 0, nanoseconds: 0))
                    ],
                    swarm: Swarm(
                        swarmID: swarmID,
                        members: [
                            SwarmMember(deviceID: aliceID, address: "127.0.0.1:\(port)"),
                            SwarmMember(deviceID: mallory.deviceID, address: ""),
                        ]))
                try await sam.session.sendTransferFrame([TransferMessage.offer(offer).encoded()], to: toAlice)
                let replied = await sam.waitFor {
                    if case .message(.offerReply, _, _) = $0 { true } else { false }
                }
                guard case .message(.offerReply(let reply), _, _)? = replied else {
                    Issue.record("Alice did not reply to the offer: \(alice.capturedOutput())")
                    return
                }
                try #require(reply.accepted && reply.relay, "Alice takes part in the swarm: \(reply)")
                let list = SwarmMembers(transferID: transferID, members: [0, 1])
                try await sam.session.sendTransferFrame([TransferMessage.swarmMembers(list).encoded()], to: toAlice)

                // Mallory links up with Alice as a member (Alice vouched for her) and announces.
                _ = await mallory.session.vouch(for: [aliceID], reason: "a member of Sam's broadcast")
                let link = try await mallory.session.connect(
                    toMember: aliceID, at: .ipv4(.loopback, port: UInt16(port)), timeout: .seconds(30)
                ).peerID
                let before = try Self.peakResidentBytes(of: alice.pid)
                let sender = try transfer.sender([small.path], to: [port])
                let ranges = (0..<Limits.maxSwarmEntriesPerFrame).map { UInt64($0)..<UInt64(chunks - $0) }
                let flood = TransferMessage.swarmHave(SwarmHave(swarmID: swarmID, fileIndex: 0, ranges: ranges))
                    .encoded()
                for _ in 0..<200 { try await mallory.session.sendTransferFrame([flood], to: link) }
                let past = SwarmHave(swarmID: swarmID, fileIndex: 0, ranges: [0..<UInt64(chunks + 1)])
                try await mallory.session.sendTransferFrame([TransferMessage.swarmHave(past).encoded()], to: link)

                let status = try await sender.exitStatus(timeout: .seconds(120))
                #expect(status == 0, "the ordinary send landed: \(sender.capturedOutput())")
                #expect(
                    SwarmHarness.identical(transfer.inbox.path + "/small.bin", small.path),
                    "small.bin arrived whole: \(alice.capturedOutput())")
                let closed = await mallory.waitFor(timeout: .seconds(120)) {
                    if case .linkDown(link, _, _) = $0 { true } else { false }
                }
                #expect(closed != nil, "a range past the file's end closed Mallory's link")
                let after = try Self.peakResidentBytes(of: alice.pid)
                print("victim peak RSS: \(before >> 20) MiB before the announcements, \(after >> 20) MiB after")
                #expect(after < 256 << 20, "Alice's peak memory: \(after >> 20) MiB")
                try alice.terminate()
            }
        }
    }

    /// A process's peak resident bytes so far (`VmHWM` in /proc/PID/status).
    static func peakResidentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kibibytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kibibytes << 10
    }
}
