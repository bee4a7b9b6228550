import FerryWire
import Testing

@testable import FerryStateMachines

@Suite struct AdmissionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var mode: PeerMode
        var state: ServerState
        var already: Bool
        var count: Int
        var policy: AcceptPolicy
        var expected: Admission
        var testDescription: String { "\(mode) \(state) already=\(already) count=\(count) \(policy)" }
    }

    static let cases: [Case] = [
        Case(mode: .server, state: .acceptingConnections, already: false, count: 0, policy: .all, expected: .accept),
        Case(mode: .peer, state: .acceptingConnections, already: false, count: 1, policy: .ask, expected: .ask),
        Case(mode: .server, state: .acceptingConnections, already: false, count: 2, policy: .all,
             expected: .deny(Deny(reason: .serverFull, detail: "2 of 2 peers connected"))),
        Case(mode: .server, state: .ignoringNewConnections, already: false, count: 0, policy: .all,
             expected: .deny(Deny(reason: .notAccepting))),
        Case(mode: .server, state: .acceptingConnections, already: true, count: 2, policy: .all,
             expected: .deny(Deny(reason: .alreadyConnected))),
        Case(mode: .server, state: .acceptingConnections, already: false, count: 0, policy: .none,
             expected: .deny(Deny(reason: .deniedByUser))),
        Case(mode: .server, state: .acceptingConnections, already: false, count: 0, policy: .trusted,
             expected: .deny(Deny(reason: .untrusted, detail: "only trusted peers are accepted"))),
        Case(mode: .client, state: .idle, already: false, count: 0, policy: .all,
             expected: .deny(Deny(reason: .notAccepting, detail: "this peer is a client and does not take connections"))),
    ]

    @Test(arguments: cases) func decision(_ c: Case) {
        let decision = Admission.decide(
            mode: c.mode, serverState: c.state, alreadyConnected: c.already, connectedCount: c.count, maxPeers: 2,
            policy: c.policy)
        #expect(decision == c.expected)
    }
}
