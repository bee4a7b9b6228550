import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryCLI
@testable import FerrySession
@testable import FerryTransfer

/// The command line's side of the broadcast swarm (issue 12, PROTOCOL.md 11.11): the `--no-relay` switches, swarm
/// links kept out of everything a person reads or picks, and what the summaries and events say about relaying.
@Suite struct BroadcastRelayTests {
    static let transferID = TransferID(bytes: [UInt8](repeating: 3, count: 16))!

    static func peer(_ name: String, id: UInt64, state: PeerState = .connected, swarm: Bool = false) -> PeerInfo {
        PeerInfo(
            peerID: PeerID(rawValue: id), deviceID: DeviceID(bytes: [UInt8](repeating: UInt8(id), count: 32))!,
            displayName: name, mode: .server, address: nil, isDiscovered: true, isAcceptingConnections: true,
            state: state, pairingCode: "123456", isSwarmLink: swarm)
    }

    // MARK: --no-relay

    @Test func noRelayParsesForSendAndReceive() throws {
        let send = try #require(try parseCommand(["send", "a.txt", "--to", "bob"]) as? SendCommand)
        #expect(send.relay)
        let quiet = try #require(try parseCommand(["send", "a.txt", "--all", "--no-relay"]) as? SendCommand)
        #expect(!quiet.relay)
        #expect(quiet == SendCommand(files: ["a.txt"], all: true, relay: false))
        let receive = try #require(try parseCommand(["receive"]) as? ReceiveCommand)
        #expect(receive.relay)
        let metered = try #require(try parseCommand(["receive", "--no-relay", "--accept", "all"]) as? ReceiveCommand)
        #expect(metered == ReceiveCommand(accept: .all, relay: false))
    }

    /// The switch reaches the engine: `TransferConfiguration.relay` is what the engine reads.
    @Test func noRelayReachesTheEngine() throws {
        let send = try #require(try parseCommand(["send", "a.txt", "--all", "--no-relay"]) as? SendCommand)
        #expect(!send.engineConfiguration().relay)
        #expect(SendCommand(files: ["a.txt"], all: true).engineConfiguration().relay)
        let receive = try #require(try parseCommand(["receive", "--no-relay"]) as? ReceiveCommand)
        #expect(!receive.engineConfiguration(directory: "/tmp", policy: .all).relay)
        #expect(ReceiveCommand().engineConfiguration(directory: "/tmp", policy: .all).relay)
    }

    /// `watch` sends each file to each peer in a transfer of its own: never a broadcast, so there is nothing to
    /// switch off.
    @Test func watchHasNoRelaySwitch() {
        #expect(WatchCommand.configuration.options.allSatisfy { $0.name != "no-relay" })
        #expect(SendCommand.configuration.options.contains { $0.name == "no-relay" })
        #expect(ReceiveCommand.configuration.options.contains { $0.name == "no-relay" })
    }

    // MARK: Swarm links are not peers a person connected

    @Test func aSwarmLinkPrintsNoConnectedLine() throws {
        for json in [false, true] {
            let stdout = CapturingTextSink()
            let stderr = CapturingTextSink()
            let reporter = TransferReporter(
                context: CommandContext(stdout: stdout, stderr: stderr), json: json, bars: false)
            reporter.linkUp(Self.peer("carol", id: 3, swarm: true))
            reporter.connected(Self.peer("carol", id: 3, swarm: true))
            #expect(stdout.text.isEmpty && stderr.text.isEmpty, "json \(json): \(stdout.text)\(stderr.text)")
            reporter.linkUp(Self.peer("alice", id: 1))
            reporter.connected(Self.peer("alice", id: 1))
            let printed = stdout.text + stderr.text
            #expect(printed.components(separatedBy: "alice").count == 3 + (json ? 0 : 1), "\(printed)")
        }
    }

    /// `--to`, `--all`, the picker and watch choose among `reachable`: a peer here only by its swarm link is not
    /// among them, nor among the names listed when a target is not found; once the link is gone, a discovered peer
    /// is an ordinary one again.
    @Test func theTrackerOffersNoSwarmLinkAsATarget() async {
        let tracker = PeerTracker()
        await tracker.record(Self.peer("carol", id: 3, swarm: true))
        await tracker.record(Self.peer("alice", id: 1, state: .available))
        #expect(await tracker.reachable.map(\.displayName) == ["alice"])
        #expect(await tracker.namesSeen == ["alice"])
        await tracker.record(Self.peer("carol", id: 3, state: .available, swarm: true))
        #expect(await tracker.reachable.map(\.displayName) == ["alice", "carol"])
    }

    @Test func chatAndPeersLeaveOutASwarmLinksComingAndGoing() {
        let swarm = Self.peer("carol", id: 3, swarm: true)
        #expect(swarm.isSwarmLinkChange(to: .connected))
        #expect(swarm.isSwarmLinkChange(to: .disconnected))
        #expect(!swarm.isSwarmLinkChange(to: .available))
        #expect(!swarm.isSwarmLinkChange(to: .unavailable))
        #expect(!Self.peer("alice", id: 1).isSwarmLinkChange(to: .connected))
        #expect(!ChatLoop.shows(swarm, .connected))
        #expect(!ChatLoop.shows(swarm, .disconnected))
        #expect(ChatLoop.shows(Self.peer("alice", id: 1), .connected))
    }

    // MARK: What the summaries say

    @Test func aBroadcastSummarySaysWhatWentOutFromHereAndWhatTheReceiversRelayed() {
        let summary = TransferSummary(
            files: 1, bytes: 64 << 20, seconds: 8,
            peers: [
                .init(
                    name: "alice", peerID: "01", filesSucceeded: 1, bytes: 64 << 20, wireBytes: 40 << 20,
                    chunkBytes: 40 << 20, relayedBytes: 24 << 20),
                .init(
                    name: "bob", peerID: "02", filesSucceeded: 1, bytes: 64 << 20, wireBytes: 30 << 20,
                    chunkBytes: 30 << 20, relayedBytes: 34 << 20),
            ])
        #expect(
            summary.text == """
                sent 1 file (64.0 MiB) to 2 peers in 8.0 s (16.0 MiB/s)
                broadcast: 70.0 MiB sent from here (1.1x the file's size), 58.0 MiB relayed by the receivers
                  alice: ok
                  bob: ok

                """)
        let line = summary.jsonLine.text
        #expect(line.hasSuffix(#""chunkBytes":73400320,"relayedBytes":60817408,"messages":0}"#), "\(line)")
        #expect(line.contains(#""failure":null,"relayedBytes":25165824}"#), "\(line)")
    }

    @Test func withoutRelayingTheSummaryIsAsBefore() {
        let direct = TransferSummary(
            files: 1, bytes: 10, seconds: 1,
            peers: [
                .init(name: "alice", peerID: "01", filesSucceeded: 1, bytes: 10, wireBytes: 10, chunkBytes: 10),
                .init(name: "bob", peerID: "02", filesSucceeded: 1, bytes: 10, wireBytes: 10, chunkBytes: 10),
            ])
        #expect(direct.text == "sent 1 file (10 B) to 2 peers in 1.0 s (20 B/s)\n  alice: ok\n  bob: ok\n")
        #expect(!direct.jsonLine.text.contains(#""failure":null,"relayedBytes""#))
        #expect(direct.jsonLine.text.hasSuffix(#""chunkBytes":20,"relayedBytes":0,"messages":0}"#))
    }

    @Test func copies() {
        #expect(TransferFormat.copies(70.0 / 64) == "1.1x")
        #expect(TransferFormat.copies(16) == "16.0x")
        #expect(TransferFormat.copies(.nan) == "0.0x")
    }

    static func finished(_ direction: TransferDirection, relayed: UInt64, served: UInt64) -> TransferOutcome {
        var outcome = TransferOutcome(
            transferID: transferID, peer: peer("alice", id: 1), direction: direction, filesSucceeded: 1,
            filesFailed: 0, filesSkipped: 0, bytes: 64 << 20, wireBytes: 16 << 20, chunkBytes: 16 << 20,
            resumedBytes: 0, duration: .seconds(8), failure: nil)
        outcome.relayedBytes = relayed
        outcome.servedBytes = served
        return outcome
    }

    @Test func aReceiverSaysWhatItGotFromAndServedToTheOthers() {
        #expect(
            TransferReporter.swarmText(for: Self.finished(.receiving, relayed: 48 << 20, served: 52 << 20))
                == "from alice's broadcast: 48.0 MiB came from other receivers, 52.0 MiB served to them")
        #expect(TransferReporter.swarmText(for: Self.finished(.receiving, relayed: 0, served: 0)) == nil)
        #expect(TransferReporter.swarmText(for: Self.finished(.sending, relayed: 48 << 20, served: 0)) == nil)
        let stderr = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false)
        reporter.report(.finished(Self.finished(.receiving, relayed: 1 << 20, served: 0)))
        #expect(stderr.text == "from alice's broadcast: 1.0 MiB came from other receivers, 0 B served to them\n")
    }

    static let totals = SwarmTotals(
        transferID: transferID, sender: peer("alice", id: 1), relayedBytes: 48 << 20, servedBytes: 60 << 20)

    /// A receiver that served on after its last file says what it served in all when it stops; nothing when it
    /// relayed nothing either way, or served nothing more than its `finished` line said.
    @Test func aReceiverThatServedOnSaysWhatItServedInAll() {
        #expect(
            TransferReporter.text(for: Self.totals)
                == "alice's broadcast ended here: in all 48.0 MiB came from other receivers, 60.0 MiB served to them")
        let stderr = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false)
        var nothing = Self.totals
        nothing.relayedBytes = 0
        nothing.servedBytes = 0
        reporter.report(.swarmEnded(nothing))
        #expect(stderr.text == "")
        reporter.report(.swarmEnded(Self.totals))
        #expect(stderr.text == TransferReporter.text(for: Self.totals) + "\n")
        // After a `finished` line that said as much, it would only repeat it: nothing; after one that said less, the
        // totals.
        let quiet = CapturingTextSink()
        let second = TransferReporter(
            context: CommandContext(stdout: CapturingTextSink(), stderr: quiet), json: false, bars: false)
        second.report(.finished(Self.finished(.receiving, relayed: 48 << 20, served: 60 << 20)))
        second.report(.swarmEnded(Self.totals))
        #expect(quiet.text == "from alice's broadcast: 48.0 MiB came from other receivers, 60.0 MiB served to them\n")
        second.report(.finished(Self.finished(.receiving, relayed: 48 << 20, served: 52 << 20)))
        second.report(.swarmEnded(Self.totals))
        #expect(quiet.text.hasSuffix("52.0 MiB served to them\n" + TransferReporter.text(for: Self.totals) + "\n"))
    }

    static func cutOff(_ direction: TransferDirection, reporter: String?) -> RelayerReport {
        RelayerReport(
            transferID: transferID, direction: direction, offender: "bob", reporter: reporter,
            reason: "a chunk that does not match the sender's digest", fileIndex: 0, chunkIndex: 12)
    }

    @Test func aCutOffRelayerIsNamedWithWhatItDid() {
        #expect(
            TransferReporter.text(for: Self.cutOff(.receiving, reporter: nil))
                == "bob is cut off from this broadcast: it sent a chunk that does not match the sender's digest"
                + " (nothing of it was kept)")
        #expect(
            TransferReporter.text(for: Self.cutOff(.sending, reporter: "carol"))
                == "bob is cut off from this broadcast: carol reports that it sent a chunk that does not match the"
                + " sender's digest; bob gets the rest from here directly")
    }

    // MARK: JSON

    /// The new keys of `finished` and `summary`, `relayerCutOff` and `swarmEnded` are in docs/EVENTS.md.
    @Test func theRelayEventsAndKeysAreDocumented() throws {
        let stdout = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: stdout, stderr: CapturingTextSink()), json: true, bars: false)
        reporter.report(.finished(Self.finished(.receiving, relayed: 5, served: 7)))
        reporter.report(.relayerCutOff(Self.cutOff(.sending, reporter: "carol")))
        reporter.report(.relayerCutOff(Self.cutOff(.receiving, reporter: nil)))
        reporter.report(.swarmEnded(Self.totals))
        let summary = TransferSummary(
            files: 1, bytes: 10, seconds: 1,
            peers: [.init(name: "a", peerID: "01", filesSucceeded: 1, bytes: 10, chunkBytes: 4, relayedBytes: 6)])
        let lines = stdout.text.split(separator: "\n").map(String.init) + [summary.jsonLine.text]
        #expect(lines.count == 5)
        let document = try EventsDocument.load(besides: #filePath)
        #expect(document.undocumented(in: lines, command: JSONEvents.Transfers.command) == [])
        let finished = try #require(TransferHarnessJSON.object(lines[0]))
        #expect(finished["relayedBytes"] as? Int == 5 && finished["servedBytes"] as? Int == 7)
        let cut = try #require(TransferHarnessJSON.object(lines[1]))
        #expect(cut["event"] as? String == "relayerCutOff" && cut["reporter"] as? String == "carol")
        #expect(try #require(TransferHarnessJSON.object(lines[2]))["reporter"] is NSNull)
        let ended = try #require(TransferHarnessJSON.object(lines[3]))
        #expect(ended["event"] as? String == "swarmEnded" && ended["peer"] as? String == "alice")
        #expect(ended["relayedBytes"] as? Int == 48 << 20 && ended["servedBytes"] as? Int == 60 << 20)
    }
}

/// A JSON line as a dictionary.
enum TransferHarnessJSON {
    static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
}
