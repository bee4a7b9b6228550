import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// `--no-relay` on `send` and `receive` (issue 12): real processes start with it and a broadcast still reaches
    /// every receiver, each of them straight from the sender. How relaying itself behaves is tested with the engine.
    @Suite struct RelayFlagProcessTests {
        @Test func noRelayOnBothSidesStillReachesEveryReceiver() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("direct.bin", size: 3 << 20)
            var receivers: [(process: FerryProcess, port: Int, directory: TemporaryDirectory)] = []
            defer { receivers.forEach { $0.directory.remove() } }
            // One receiver that must not upload, one that would take part: the sender offers no swarm either way.
            for (index, extra) in [["--no-relay"], []].enumerated() {
                let directory = try TemporaryDirectory(prefix: "ferry-inbox-\(index)")
                let (process, port) = try harness.receiver("inbox-\(index)", into: directory.path, extra)
                receivers.append((process, port, directory))
            }
            let (status, summary, _) = try harness.send([file.path], to: receivers.map(\.port), ["--no-relay"])
            #expect(status == 0, "\(summary ?? [:])")
            #expect(summary?["relayedBytes"] as? Int == 0, "\(summary ?? [:])")
            #expect((summary?["peers"] as? [Any])?.count == 2)
            let expected = try TransferHarness.sha256(file.path)
            for receiver in receivers {
                #expect(try receiver.process.waitForExit(timeout: .seconds(60)) == 0)
                #expect(try TransferHarness.sha256(receiver.directory.path + "/direct.bin") == expected)
                let objects = receiver.process.allStdoutLines.compactMap(TransferHarness.json)
                let finished = objects.last { $0["event"] as? String == "finished" }
                #expect(finished?["relayedBytes"] as? Int == 0 && finished?["servedBytes"] as? Int == 0)
                // The only link a person made is the sender's.
                let connected = objects.filter { $0["event"] as? String == "connected" }.compactMap { $0["peer"] }
                #expect(connected as? [String] == ["outbox"], "\(objects)")
            }
        }
    }
}
