import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryLocalSend
@testable import FerrySession
@testable import FerryTransfer

/// A LocalSend text message whose session ends while its offer waits for consent (review of lsseam): the offer's
/// await is held by the engine's accept gate, the session is cancelled meanwhile, and the detach that follows is
/// held before it marks the peer, so the offer is still accepted after the session ended.
@Suite(.serialized, .timeLimit(.minutes(1))) struct LocalSendMessageSessionTests {
    static let body =
        "{\"info\":{\"alias\":\"alice\",\"version\":\"2.1\",\"deviceType\":\"mobile\"},\"files\":{\"t1\":"
        + "{\"id\":\"t1\",\"fileName\":\"note.txt\",\"size\":5,\"fileType\":\"text/plain\",\"preview\":\"hello\"}}}"

    @Test func aMessageWhoseSessionEndedWhileItsOfferWaitedIsAnswered403AndNotKept() async throws {
        try await TemporaryDirectory.with(prefix: "ls-message") { inbox in
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            var session = SessionConfiguration(
                sessionID: "unit", displayName: "bob", mode: .peer, identity: TestIdentity.named("bob"), listenPort: 0,
                discoveryEnabled: false, acceptPolicy: .all, transfersEnabled: true)
            session.handshakeTimeout = TestIdentity.handshakeTimeout
            try await Session.run(configuration: session, reactor: reactor) { bob in
                var configuration = TransferConfiguration(
                    receiveDirectory: inbox.path, offerPolicy: .all, chunkSize: Limits.minChunkSize)
                configuration.memoryDelivery = MemoryDelivery(
                    maxSize: UInt64(Payload.maxMessageBytes), mediaTypes: [Payload.messageMediaType],
                    alsoPublish: true)
                try await TransferEngine.run(session: bob, configuration: configuration) { engine in
                    let sessions = LocalSendSessions(
                        engine: engine,
                        configuration: LocalSendServerConfiguration(device: LocalSendDevice(alias: "ferry-box")))
                    let peer = LocalSendPeer(
                        address: "192.0.2.7", certificateFingerprint: String(repeating: "AB", count: 32))
                    let request = try LocalSendPrepareUpload(json: Array(Self.body.utf8)[...])
                    await engine.closeAcceptGate()
                    await engine.closeDetachGate(beforeMarking: true)
                    let answering = Task { await sessions.prepareUpload(request, from: peer, pin: nil) }
                    while await engine.acceptGateHolds == nil { await Task.yield() }
                    // The sender cancels while its offer waits for consent: the session ends, its detach waits.
                    let cancelled = await sessions.cancel(LocalSendQuery(), from: peer)
                    #expect(cancelled.status == .ok, "\(cancelled)")
                    while await !engine.detachGateHolds { await Task.yield() }
                    await engine.openAcceptGate()
                    let answer = await answering.value
                    #expect(
                        answer.status == .forbidden, "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                    await engine.openDetachGate()
                    let visible = try FileManager.default.contentsOfDirectory(atPath: inbox.path).filter {
                        $0 != ".ferry-staging"
                    }
                    #expect(visible.isEmpty, "\(visible)")
                }
            }
        }
    }
}
