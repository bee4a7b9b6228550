import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// The session layer through real `ferry` processes on loopback.
    @Suite(.serialized) struct SessionLoopbackTests {
        @Test func twoPeersDiscoverAndConnect() throws {
            let harness = try ChatHarness()
            let (alice, _) = try harness.chat("alice")
            let (bob, _) = try harness.chat("bob")
            try alice.waitForEvent("connected", peer: "bob")
            try bob.waitForEvent("connected", peer: "alice")
            let lister = try harness.peers()
            var listed = Set<String>()
            while listed != ["alice", "bob"] {
                let object = try lister.nextJSON { $0["event"] as? String == "peer" && $0["state"] as? String != nil }
                listed.insert(object["name"] as? String ?? "")
            }
            lister.signal(SIGINT)
            #expect(try lister.waitForExit() == 130)
        }

        @Test func sessionIDsIsolatePeers() throws {
            let harness = try ChatHarness()
            let other = harness.session + "-other"
            let (_, _) = try harness.chat("outsider", session: other)
            let (_, _) = try harness.chat("insider")
            let lister = try harness.peers()
            _ = try lister.nextJSON { $0["event"] as? String == "peer" && $0["name"] as? String == "insider" }
            // Ask again after one more full announcement round of both peers: the outsider is still not listed.
            let second = try harness.peers()
            _ = try second.nextJSON { $0["event"] as? String == "peer" && $0["name"] as? String == "insider" }
            for process in [lister, second] {
                process.signal(SIGINT)
                _ = try process.waitForExit()
                #expect(!process.allStdoutLines.contains { $0.contains("outsider") })
            }
        }

        @Test func messagesFlowBothWaysInOrder() throws {
            let harness = try ChatHarness()
            let (server, _) = try harness.chat("server", ["--mode", "server"])
            let (client, _) = try harness.chat("client", ["--mode", "client"])
            try server.waitForEvent("connected", peer: "client")
            try client.waitForEvent("connected", peer: "server")
            for index in 0..<50 { try client.send(line: "c\(index)") }
            for index in 0..<50 { try server.send(line: "s\(index)") }
            for index in 0..<50 {
                let message = try server.nextMessage()
                #expect(message.text == "c\(index)" && message.from == "client" && message.mode == "reliable")
            }
            for index in 0..<50 {
                #expect(try client.nextMessage().text == "s\(index)")
            }
        }

        @Test func serverFullDeniesTheNextClient() throws {
            let harness = try ChatHarness()
            let (server, _) = try harness.chat("server", ["--mode", "server", "--max-peers", "1"])
            let (first, _) = try harness.chat("first", ["--mode", "client"])
            try server.waitForEvent("connected", peer: "first")
            try first.waitForEvent("connected", peer: "server")
            let (second, _) = try harness.chat("second", ["--mode", "client"])
            let message = try second.waitForError(containing: "full")
            #expect(message.contains("server"))
        }

        @Test func denyPolicyIsReportedToTheRequester() throws {
            let harness = try ChatHarness()
            let (_, _) = try harness.chat("grumpy", ["--mode", "server", "--accept", "none"])
            let (client, _) = try harness.chat("hopeful", ["--mode", "client"])
            // A deny by the user (or --accept none) reads as chat's refusal does (issue 28, 10).
            let message = try client.waitForError(containing: "did not accept you")
            #expect(message == "grumpy did not accept you into the chat", "\(message)")
        }

        @Test func unreliableMessagesAndTheirSizeLimit() throws {
            let harness = try ChatHarness()
            let (alice, _) = try harness.chat("alice")
            let (bob, _) = try harness.chat("bob")
            try alice.waitForEvent("connected", peer: "bob")
            try bob.waitForEvent("connected", peer: "alice")
            try alice.send(line: "/unreliable " + String(repeating: "x", count: 1201))
            let error = try alice.waitForError(containing: "larger than the limit")
            #expect(error.contains("1201") && error.contains("1200"))
            // Datagrams may be lost, even on loopback; one of a few is enough to show they arrive.
            for index in 0..<5 { try alice.send(line: "/unreliable ping\(index)") }
            let message = try bob.nextMessage()
            #expect(message.mode == "unreliable" && message.text.hasPrefix("ping"))
        }

        @Test func killedPeerBecomesDisconnected() throws {
            let harness = try ChatHarness()
            let (alice, _) = try harness.chat("alice", ["--disconnect-timeout", "3"])
            let (bob, _) = try harness.chat("bob", ["--disconnect-timeout", "3"])
            try alice.waitForEvent("connected", peer: "bob")
            bob.kill()
            #expect(try bob.waitForExit() == 128 + SIGKILL)
            let event = try alice.waitForEvent("disconnected", peer: "bob")
            // A killed peer says no goodbye: alice must see a lost link (the kernel's FIN) or silence, never a
            // goodbye, and must say so.
            let reason = event["reason"] as? String ?? ""
            #expect(!reason.contains("goodbye"), "\(reason)")
            #expect(reason.contains("lost") || reason.contains("no sign of life"), "\(reason)")
        }

        @Test func endOfInputSaysGoodbye() throws {
            let harness = try ChatHarness()
            let (alice, _) = try harness.chat("alice")
            let (bob, _) = try harness.chat("bob")
            try alice.waitForEvent("connected", peer: "bob")
            bob.closeStdin()
            #expect(try bob.waitForExit() == 0)
            let event = try alice.waitForEvent("disconnected", peer: "bob")
            #expect((event["reason"] as? String ?? "").contains("goodbye"))
        }
    }
}
