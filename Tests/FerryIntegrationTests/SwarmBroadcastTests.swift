import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// Broadcasts in which the receivers pass chunks on to each other (issue 12, PROTOCOL.md 11.11): they relay, every
    /// file arrives identical, the off switches fall back to direct sending, and a receiver that dies mid-way costs
    /// the others nothing.
    @Suite(.serialized) struct SwarmBroadcastTests {
        @Test func aBroadcastToFourReceiversRelaysAndEveryFileIsIdentical() async throws {
            let names = ["r0", "r1", "r2", "r3"]
            let swarm = try SwarmHarness(names)
            let file = try swarm.transfer.files.random("four.bin", size: 16 << 20 + 777)
            let sender = try swarm.transfer.sender([file.path], to: swarm.ports, ["--compress", "none"])
            let results = try await swarm.finishReceivers()
            for (index, result) in results.enumerated() {
                #expect(result.status == 0, "\(swarm.receivers[index].process.capturedOutput())")
                try swarm.expectIdentical(index, "four.bin", to: file.path)
            }
            let (status, stdout, _) = try await sender.finish()
            #expect(status == 0, "\(sender.capturedOutput())")
            // Receivers relayed: some stored chunks from another, and at least as much was served as was stored that way.
            // A receiver with every file serves on after its `finished` line: its `swarmEnded` line has the totals.
            let relayed = results.map { SwarmHarness.finishedField("relayedBytes", in: $0.lines) ?? 0 }
            let ended = results.map { SwarmHarness.events("swarmEnded", in: $0.lines) }
            #expect(ended.allSatisfy { $0.count == 1 }, "a receiver without one swarmEnded line: \(ended)")
            let served = ended.map { $0.first?["servedBytes"] as? Int ?? 0 }
            let relayedInAll = ended.map { $0.first?["relayedBytes"] as? Int ?? 0 }
            #expect(relayedInAll == relayed, "relayed in all \(relayedInAll) against \(relayed) when finished")
            #expect(relayed.reduce(0, +) > 0, "no receiver stored a chunk from another: \(relayed)")
            #expect(served.reduce(0, +) >= relayed.reduce(0, +), "served \(served), relayed \(relayed)")
            // The sender counts them too (by the storedFromPeer acknowledgements), per receiver.
            let senderLines = stdout.compactMap(TransferHarness.json)
            let counted = SwarmHarness.events("finished", in: senderLines).map { $0["relayedBytes"] as? Int ?? 0 }
            #expect(counted.count == 4 && counted.reduce(0, +) == relayed.reduce(0, +), "\(counted) vs \(relayed)")
            let cuts = (results.flatMap(\.lines) + senderLines).filter { $0["event"] as? String == "relayerCutOff" }
            #expect(cuts.isEmpty, "an honest receiver was cut off: \(cuts)")
        }

        /// `send --no-relay`: the offer names no swarm, every receiver gets every chunk from the sender.
        @Test func sendNoRelayFallsBackToDirectSending() async throws {
            let swarm = try SwarmHarness(["r0", "r1", "r2"])
            let file = try swarm.transfer.files.random("direct.bin", size: 8 << 20 + 5)
            let sender = try swarm.transfer.sender(
                [file.path], to: swarm.ports, ["--compress", "none", "--no-relay"])
            let results = try await swarm.finishReceivers()
            for (index, result) in results.enumerated() {
                #expect(result.status == 0, "\(swarm.receivers[index].process.capturedOutput())")
                try swarm.expectIdentical(index, "direct.bin", to: file.path)
                #expect(
                    SwarmHarness.finishedField("relayedBytes", in: result.lines) == 0, "\(result.lines.last ?? [:])")
                #expect(SwarmHarness.finishedField("servedBytes", in: result.lines) == 0, "\(result.lines.last ?? [:])")
            }
            let (status, stdout, _) = try await sender.finish()
            #expect(status == 0, "\(sender.capturedOutput())")
            let finished = SwarmHarness.events("finished", in: stdout.compactMap(TransferHarness.json))
            #expect(finished.count == 3 && finished.allSatisfy { $0["relayedBytes"] as? Int == 0 }, "\(finished)")
        }

        /// `receive --no-relay`: that receiver takes no part (it serves nothing and fetches nothing from the others),
        /// while the other two still relay between themselves.
        @Test func receiveNoRelayServesNothingWhileTheOthersRelay() async throws {
            let swarm = try SwarmHarness(["r0", "r1", "quiet"], extra: ["quiet": ["--no-relay"]])
            let file = try swarm.transfer.files.random("quiet.bin", size: 16 << 20 + 3)
            let sender = try swarm.transfer.sender([file.path], to: swarm.ports, ["--compress", "none"])
            let results = try await swarm.finishReceivers()
            for (index, result) in results.enumerated() {
                #expect(result.status == 0, "\(swarm.receivers[index].process.capturedOutput())")
                try swarm.expectIdentical(index, "quiet.bin", to: file.path)
            }
            let quiet = results[2].lines
            #expect(SwarmHarness.finishedField("servedBytes", in: quiet) == 0, "\(quiet.last ?? [:])")
            #expect(SwarmHarness.finishedField("relayedBytes", in: quiet) == 0, "\(quiet.last ?? [:])")
            let others = results[0..<2].map { SwarmHarness.finishedField("relayedBytes", in: $0.lines) ?? 0 }
            #expect(others.reduce(0, +) > 0, "the two relaying receivers relayed nothing: \(others)")
            let (status, _, _) = try await sender.finish()
            #expect(status == 0, "\(sender.capturedOutput())")
        }

        /// Four hosts on 50 Mbit/s links (sender and three receivers): one receiver is killed (SIGKILL) once it holds
        /// half the file; the other two still finish with identical files and the sender ends, reporting that one
        /// failure only.
        @Test func aReceiverKilledHalfWayDoesNotStallTheRest() async throws {
            try await ChatHarness.onTestBed(hosts: 4) { bed, harness in
                try bed.limitEveryLink(mbit: 50, burstKiB: 32)
                let source = try TemporaryDirectory(prefix: "ferry-swarm-source")
                defer { source.remove() }
                let file = try TestFiles(in: source).random("half.bin", size: 24 << 20 + 99)
                var inboxes: [TemporaryDirectory] = []
                defer { inboxes.forEach { $0.remove() } }
                var receivers: [FerryProcess] = []
                var targets: [String] = []
                for (index, name) in ["north", "south", "victim"].enumerated() {
                    let inbox = try TemporaryDirectory(prefix: "ferry-swarm-\(name)")
                    inboxes.append(inbox)
                    let host = bed.hosts[index + 1]
                    let process = harness.registry.register(
                        try bed.startFerry(
                            on: host,
                            [
                                "receive", "--json", "--into", inbox.path, "--accept", "all", "--once", "--session",
                                harness.session, "--name", name, "--port", "0",
                            ],
                            environment: harness.environment(name)))
                    let listening = try await process.nextEvent("listening", timeout: .seconds(60))
                    targets += ["--to", "\(host.address):\(TransferHarness.json(listening)?["port"] as? Int ?? 0)"]
                    receivers.append(process)
                }
                let sender = harness.registry.register(
                    try bed.startFerry(
                        on: bed.hosts[0],
                        [
                            "send", "--json", file.path, "--compress", "none", "--session", harness.session, "--name",
                            "west",
                        ]
                            + targets,
                        environment: harness.environment("west")))
                let victim = receivers[2]
                let halfLine = try await onOwnThread {
                    try victim.waitForLine(timeout: .seconds(240)) {
                        guard let event = TransferHarness.json($0), event["event"] as? String == "progress",
                            let done = event["bytes"] as? Int, let total = event["totalBytes"] as? Int
                        else { return false }
                        return done * 2 >= total
                    }
                }
                let half = TransferHarness.json(halfLine) ?? [:]
                #expect(half["bytes"] as? Int != half["totalBytes"] as? Int, "the victim was done before it was killed")
                victim.signal(SIGKILL)
                #expect(try await victim.exitStatus(timeout: .seconds(30)) == 128 + SIGKILL)
                for index in 0..<2 {
                    let (status, _, _) = try await receivers[index].finish(timeout: .seconds(240))
                    #expect(status == 0, "\(receivers[index].capturedOutput())")
                    #expect(
                        SwarmHarness.identical(inboxes[index].path + "/half.bin", file.path),
                        "\(receivers[index].capturedOutput())")
                }
                let (status, stdout, _) = try await sender.finish(timeout: .seconds(240))
                #expect(status == 1, "the victim's failure is reported: \(sender.capturedOutput())")
                let summary = stdout.compactMap(TransferHarness.json).last { $0["event"] as? String == "summary" }
                let peers = (summary?["peers"] as? [[String: Any]]) ?? []
                let ok = Dictionary(
                    peers.compactMap { peer in
                        (peer["peer"] as? String).map { ($0, peer["ok"] as? Bool ?? false) }
                    }, uniquingKeysWith: { first, _ in first })
                #expect(ok == ["north": true, "south": true, "victim": false], "\(summary ?? [:])")
            }
        }
    }
}
