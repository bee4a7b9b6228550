import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Synchronization
import Testing

extension IntegrationTests {
    /// Issue 27's hostile member's campaign (docs/SECURITY.md promise 9): one test in which a hostile member
    /// (`HostileSwarmMember`, a real session in this process) does each misdeed of the issue in turn against real
    /// `ferry` processes, and the victim's peak memory (`VmHWM`), resident memory (`VmRSS`) and open descriptors
    /// (`/proc/PID/fd`) are read from /proc before and after each one. Each misdeed has its own test of the logic
    /// (named in SECURITY.md); this one shows the bounds hold for whole processes, with a wide margin, and prints the
    /// figures in one table.
    ///
    /// - (1) against a `ferry send`: a member of its broadcast asks for every chunk at once and reads at 2 MiB/s;
    /// - against one `ferry receive` (Alice), a member of a scripted sender's swarm, in turn: (8) the sender's lists
    ///   name loopback listeners that count connections, a host name, an IPv6 loopback listener, a foreign address
    ///   and port 0, three times; (9) a member asks for a chunk of each of 256 files she holds; (3) 200 `swarmHave`
    ///   frames of 1024 overlapping ranges over a 16 GiB file, while an ordinary 1 KiB `ferry send` to her must land;
    ///   (6) a member behind a proxy that reads 128 KiB/s floods 100,000 requests; (4) while her engine checks an 8 GiB
    ///   resumed prefix (it takes no frame meanwhile), a peer sends 300 frames of 1 MiB.
    @Suite(.serialized) struct HostileCampaignTests {
        /// A victim's peak memory may stay under this after any misdeed: a plain send stays near 40 MiB, a receiver
        /// that holds its 64 MiB backlog of one peer's frames near 110 MiB; the behaviour before issue 27 took the
        /// sender to 296 MiB (1) and a member past 1 GiB (3, 4).
        static let peakBound = 160 << 20
        /// Descriptors a member may hold open beyond those it had before a member asked it for chunks of many files:
        /// its read handles (`TransferConfiguration.swarmReadHandles`, 64) and a few more (a link, a staged file).
        static let readHandleBound = 64 + 8

        @Test func eachMisdeedOfAHostileMemberLeavesItsVictimsMemoryAndDescriptorsBounded() async throws {
            let figures = CampaignFigures()
            defer { print(figures.table) }
            try await senderAsVictim(figures)
            try await memberAsVictim(figures)
        }

        /// (1) Mallory, a member of a real broadcast of 256 MiB to Alice and her, asks the sender for every chunk
        /// whose digest reaches her, all at once, and reads the sender's link at about 2 MiB/s (a proxy holds each
        /// 64 KiB it relays for 32 ms); she never ends her transfer. The sender's peak memory is read once Alice has
        /// the file whole and Mallory has had 4 answers to her requests (by then the sender took them all: it sends
        /// the answers after the digests that made her ask). Before issue 27 this took the sender to 296 MiB; its
        /// window (8 MiB) bounds what it holds for her now.
        func senderAsVictim(_ figures: CampaignFigures) async throws {
            let swarm = try await onOwnThread { try SwarmHarness(["alice"], test: "campaign-sender") }
            let file = try swarm.transfer.files.random("broadcast.bin", size: 256 << 20)
            let greedy = HostileSwarmMember.Behaviour(flipBytes: false, holdsResults: true, requestsEverything: true)
            try await HostileSwarmMember.run(sessionID: swarm.transfer.session, name: "mallory", behaviour: greedy) {
                mallory in
                let proxy = try FaultProxy(
                    targetPort: await mallory.port, mode: .delayOneWay(.milliseconds(32), direction: .clientToServer))
                defer { proxy.close() }
                let sender = try swarm.transfer.sender(
                    [file.path], to: swarm.ports + [Int(proxy.port)], ["--compress", "none"])
                defer { sender.kill() }
                let offered = await mallory.waitFor(timeout: .seconds(60)) {
                    if case .offer = $0 { true } else { false }
                }
                guard case .offer(let offer, _)? = offered, offer.swarm != nil else {
                    Issue.record("Mallory had no offer with a swarm: \(sender.capturedOutput())")
                    return
                }
                let before = try VictimSample.of(sender.pid)
                let results = try await swarm.finishReceivers()
                #expect(results[0].status == 0, "\(swarm.receivers[0].process.capturedOutput())")
                try swarm.expectIdentical(0, "broadcast.bin", to: file.path)
                // Mallory's answers: chunks of her transfer that she asked for (her seeds come unasked).
                var from = 0
                while await mallory.answersFromSender < 4 {
                    let chunk = await mallory.waitFor(from: from, timeout: .seconds(60)) { observation in
                        if case .message(.chunk, _, _) = observation { true } else { false }
                    }
                    guard let chunk else { break }
                    from = chunk.index + 1
                }
                let answers = await mallory.answersFromSender
                let after = try VictimSample.of(sender.pid)
                let asked = await mallory.askedOfSenderCount
                figures.add(
                    "1 requests every chunk, reads 2 MiB/s", victim: "ferry send", before: before, after: after,
                    note: "asked for \(asked) of 256 chunks, \(answers) answered so far; the honest receiver done")
                #expect(asked >= 128, "Mallory asked the sender for most chunks (the misdeed was played)")
                #expect(answers >= 4, "Mallory had answers to her requests: \(sender.capturedOutput())")
                #expect(
                    after.peak < Self.peakBound,
                    "the sender's peak memory with a member that asks for everything: \(after.peak >> 20) MiB")
                #expect(sender.isRunning, "the sender still serves Mallory: \(sender.capturedOutput())")
                try sender.terminate()
            }
        }
    }
}

/// What /proc says of a victim process at one moment.
struct VictimSample: Sendable {
    /// Peak resident bytes so far (`VmHWM`).
    var peak: Int
    /// Resident bytes now (`VmRSS`).
    var resident: Int
    /// Open descriptors now (entries of /proc/PID/fd).
    var descriptors: Int

    static func of(_ pid: Int32) throws -> VictimSample {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kibibytes(_ field: String) throws -> Int {
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) << 10
        }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
        return VictimSample(peak: try kibibytes("VmHWM"), resident: try kibibytes("VmRSS"), descriptors: descriptors)
    }

    /// Bytes this process has read so far (`rchar` of /proc/PID/io: every read, page cache or not).
    static func bytesRead(by pid: Int32) throws -> Int {
        let io = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        let line = try #require(io.split(separator: "\n").first { $0.hasPrefix("rchar:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }
}

/// The campaign's figures, one row per misdeed, printed as one table (also when the test fails).
final class CampaignFigures: Sendable {
    struct Row: Sendable {
        var misdeed: String
        var victim: String
        var before: VictimSample
        var after: VictimSample
        var descriptorPeak: Int?
        var note: String
    }

    private let rows = Mutex<[Row]>([])

    func add(
        _ misdeed: String, victim: String, before: VictimSample, after: VictimSample, descriptorPeak: Int? = nil,
        note: String = ""
    ) {
        let row = Row(
            misdeed: misdeed, victim: victim, before: before, after: after, descriptorPeak: descriptorPeak,
            note: note)
        rows.withLock { $0.append(row) }
        print("campaign: \(Self.line(row))")
    }

    var table: String {
        let header =
            "misdeed                                | victim        | peak RSS before -> after | RSS after "
            + "| descriptors before -> after (peak) | what else"
        let lines = rows.withLock { $0 }.map(Self.line)
        return (["hostile member's campaign (issue 27):", header] + lines).joined(separator: "\n")
    }

    private static func line(_ row: Row) -> String {
        func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        let descriptors =
            "\(row.before.descriptors) -> \(row.after.descriptors)"
            + (row.descriptorPeak.map { " (\($0))" } ?? "")
        return [
            pad(row.misdeed, 38), pad(row.victim, 13), pad("\(mib(row.before.peak)) -> \(mib(row.after.peak))", 24),
            pad(mib(row.after.resident), 9), pad(descriptors, 34), row.note,
        ].joined(separator: " | ")
    }
}
