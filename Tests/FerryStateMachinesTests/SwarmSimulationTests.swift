import Foundation
import Testing

@testable import FerryStateMachines

/// The swarm scheduler in `SwarmSimulation`'s model of N receivers on links of one speed: every receiver ends with
/// every chunk, and the sender's link carries about one copy (PROTOCOL.md 11.11, ARCHITECTURE.md "Swarm
/// scheduler"). Simulated steps, not time: nothing here depends on the machine's speed.
@Suite("Swarm simulation")
struct SwarmSimulationTests {
    static let chunks = 64  // 64 MiB in 1 MiB chunks, as ferry-bench swarm sends

    /// One row of the table: time relative to one receiver sent directly, and copies on the sender's link.
    static func row(_ receivers: Int, _ variant: String, _ outcome: SwarmSimulation.Outcome) -> String {
        let base = Double(SwarmSimulation.directSteps(chunks: chunks))
        let time = outcome.steps.map { String(format: "%.2f", Double($0) / base) } ?? "stalled"
        let honest = outcome.honestSteps.map { String(format: "%.2f", Double($0) / base) } ?? "stalled"
        let copies = String(format: "%.2f", Double(outcome.senderChunks) / Double(chunks))
        let relayed = String(format: "%.2f", Double(outcome.relayedChunks) / Double(chunks))
        return "| \(receivers) | \(variant) | \(time) | \(honest) | \(copies) | \(relayed) | \(receivers) |"
    }

    static func simulate(_ receivers: Int, _ variant: String) -> SwarmSimulation.Outcome {
        var model = SwarmSimulation(receivers: receivers, chunks: chunks)
        switch variant {
        case "leaver": model.leaver = (member: 1, step: chunks / 2)
        case "bad relayer": model.badRelayer = 1
        default: break
        }
        return model.run()
    }

    /// Prints the table of ARCHITECTURE.md "Swarm scheduler": 2 to 16 receivers always, 32 and 64 with
    /// `FERRY_SWARM_TABLE=1` (minutes in a debug build): `FERRY_SWARM_TABLE=1 swift test --filter SwarmSimulationTests/table`.
    @Test func table() {
        var lines = [
            "| receivers | case | time, all (x 1 receiver) | time, all not cut off | copies on the sender's link "
                + "| copies relayed | direct: time and copies |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        let large = ProcessInfo.processInfo.environment["FERRY_SWARM_TABLE"] == "1"
        for receivers in [2, 4, 8, 16] + (large ? [32, 64] : []) {
            for variant in ["all stay", "leaver", "bad relayer"] where receivers > 2 || variant == "all stay" {
                let outcome = Self.simulate(receivers, variant)
                lines.append(Self.row(receivers, variant, outcome))
                #expect(outcome.steps != nil, "\(receivers) receivers, \(variant): stalled")
            }
        }
        print(lines.joined(separator: "\n"))
    }

    @Test(arguments: [4, 16])
    func everyReceiverCompletesAndTheSenderSendsAboutOneCopy(_ receivers: Int) {
        let outcome = Self.simulate(receivers, "all stay")
        #expect(outcome.steps != nil)
        #expect(outcome.complete == receivers)
        #expect(outcome.senderChunks == Self.chunks, "the sender sent each chunk once")
        #expect(outcome.relayedChunks == (receivers - 1) * Self.chunks)
    }

    @Test func aReceiverLeavingHalfWayCostsTheOthersOnlyItsShare() {
        let outcome = Self.simulate(16, "leaver")
        #expect(outcome.complete == 15)
        // Its seeds that nobody held yet are seeded anew: at most its share of the chunks more.
        #expect(outcome.senderChunks <= Self.chunks + Self.chunks / 16 + 1)
    }

    @Test func aBadRelayerIsCutOffAndEveryoneElseCompletes() throws {
        let outcome = Self.simulate(16, "bad relayer")
        #expect(outcome.cutOff == [1])
        #expect(outcome.complete == 16, "the bad relayer too gets every chunk, from the sender")
        // The others finish about as soon as without it (the sender's extra copy for it comes after their seeds).
        let clean = Self.simulate(16, "all stay")
        let honest = try #require(outcome.honestSteps)
        let cleanSteps = try #require(clean.steps)
        #expect(honest <= cleanSteps + Self.chunks / 4, "\(honest) steps, \(cleanSteps) without a bad relayer")
        #expect(outcome.senderChunks <= 2 * Self.chunks + 1)
    }
}
