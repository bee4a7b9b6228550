import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// Broadcast, a stalled receiver, and what a watcher of the receive directory sees.
    @Suite(.serialized) struct TransferBroadcastTests {
        @Test func broadcastReachesThreeReceivers() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("all.bin", size: 5 << 20)
            var receivers: [(FerryProcess, Int, TemporaryDirectory)] = []
            for index in 0..<3 {
                let directory = try TemporaryDirectory(prefix: "ferry-inbox-\(index)")
                let (process, port) = try harness.receiver("inbox-\(index)", into: directory.path)
                receivers.append((process, port, directory))
            }
            defer { receivers.forEach { $0.2.remove() } }
            let (status, summary, _) = try harness.send([file.path], to: receivers.map(\.1))
            #expect(status == 0, "\(summary ?? [:])")
            let expected = try TransferHarness.sha256(file.path)
            for (process, _, directory) in receivers {
                #expect(try process.waitForExit(timeout: .seconds(60)) == 0)
                #expect(try TransferHarness.sha256(directory.path + "/all.bin") == expected)
            }
            #expect((summary?["peers"] as? [Any])?.count == 3)
        }

        @Test func broadcastWithAllFindsEveryReceiverOfTheSession() throws {
            let harness = try TransferHarness()
            let file = try harness.files.text("all.txt", size: 300_000)
            var receivers: [(FerryProcess, TemporaryDirectory)] = []
            for index in 0..<3 {
                let directory = try TemporaryDirectory(prefix: "ferry-inbox-\(index)")
                receivers.append((try harness.receiver("inbox-\(index)", into: directory.path).process, directory))
            }
            defer { receivers.forEach { $0.1.remove() } }
            // All three are up and announcing before the sender starts: `ferry peers` has listed each of them.
            let lister = try harness.chat.peers()
            var listed = Set<String>()
            while listed.count < 3 {
                let peer = try lister.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "peer" }
                if let name = peer["name"] as? String, name.hasPrefix("inbox-") { listed.insert(name) }
            }
            lister.signal(SIGINT)
            _ = try lister.waitForExit()
            let sender = try harness.chat.registry.startFerry(
                [
                    "send", "--json", file.path, "--all", "--wait", "20", "--session", harness.session, "--interface",
                    "lo",
                    "--name", "outbox",
                ],
                environment: harness.chat.environment("outbox"))
            let status = try sender.waitForExit(timeout: .seconds(120))
            #expect(status == 0, "\(sender.capturedOutput())")
            let summary = sender.allStdoutLines.compactMap(TransferHarness.json).last {
                $0["event"] as? String == "summary"
            }
            let reached = Set(((summary?["peers"] as? [[String: Any]]) ?? []).compactMap { $0["peer"] as? String })
            // --all takes the receivers it hears of until no new one came for longer than a receiver's announce
            // interval (SendCommand.allQuietPeriod), so each of the three, announcing, is heard and sent to.
            #expect(reached == ["inbox-0", "inbox-1", "inbox-2"], "\(sender.capturedOutput())")
            for (process, directory) in receivers {
                #expect(try process.waitForExit(timeout: .seconds(60)) == 0)
                #expect(try TransferHarness.visibleFiles(in: directory.path) == ["all.txt": 300_000])
            }
        }

        @Test func aStalledReceiverFailsAloneWhileTheOthersFinish() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("fan.bin", size: 48 << 20)
            let fast = try TemporaryDirectory(prefix: "ferry-inbox-fast")
            let slow = try TemporaryDirectory(prefix: "ferry-inbox-slow")
            defer {
                fast.remove()
                slow.remove()
            }
            let (fastReceiver, fastPort) = try harness.receiver("fast", into: fast.path)
            let (_, slowPort) = try harness.receiver("slow", into: slow.path, once: false)
            // Slowed from the start (so it cannot finish first), then stalled completely.
            let proxy = try FaultProxy(targetPort: UInt16(slowPort), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [fastPort, Int(proxy.port)], ["--compress", "none"])
            _ = try fastReceiver.nextJSON { $0["event"] as? String == "started" }
            proxy.mode = .stall
            #expect(try fastReceiver.waitForExit(timeout: .seconds(120)) == 0)
            #expect(try TransferHarness.sha256(fast.path + "/fan.bin") == TransferHarness.sha256(file.path))
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 1, "the stalled peer's failure is reported")
            #expect(try TransferHarness.visibleFiles(in: slow.path).isEmpty)
        }

        @Test func aWatcherOfTheDirectorySeesOnlyCompleteFilesEachOnce() throws {
            let harness = try TransferHarness()
            var sizes: [String: Int] = [:]
            var paths: [String] = []
            for index in 0..<20 {
                let size = index * 150_000 + 1
                sizes["w\(index).bin"] = size
                paths.append(try harness.files.random("w\(index).bin", size: size, seed: UInt64(index + 1)).path)
            }
            let (receiver, port) = try harness.receiver()
            let recorder = try InotifyRecorder(directory: harness.inbox.path)
            let (status, _, _) = try harness.send(paths, to: [port])
            #expect(status == 0)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let events = recorder.stop().filter { !$0.name.hasPrefix(".") }
            let arrivals = events.filter { $0.mask & UInt32(IN_MOVED_TO) != 0 }
            #expect(events.count == arrivals.count, "only renames into place, never a write in DIR: \(events)")
            #expect(Dictionary(grouping: arrivals, by: \.name).mapValues(\.count) == sizes.mapValues { _ in 1 })
            for arrival in arrivals {
                #expect(arrival.sizeWhenSeen == sizes[arrival.name], "\(arrival)")
            }
        }
    }
}
