import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// The session layer across hosts: network namespaces joined by a bridge, one `ferry` per host.
    @Suite(.serialized) struct SessionNamespaceTests {
        @Test func peersOnThreeHostsDiscoverEachOther() async throws {
            try await ChatHarness.onTestBed(hosts: 3) { bed, harness in
                // Every interface of the host (lo and eth0): the default a user gets.
                let names = ["h0", "h1", "h2"]
                var chats: [FerryProcess] = []
                for (index, host) in bed.hosts.enumerated() {
                    chats.append(try harness.chat(names[index], interface: nil, bed: bed, host: host).process)
                }
                for (index, chat) in chats.enumerated() {
                    let others = Set(names).subtracting([names[index]])
                    for (other, event) in try chat.waitForEvent("connected", peers: others) {
                        let peer = event["peer"] as? [String: Any]
                        let address = peer?["address"] as? String ?? ""
                        #expect(address.hasPrefix("10.203."), "\(names[index]) reaches \(other) at \(address)")
                    }
                }
                try chats[0].send(line: "hello from h0")
                #expect(try chats[1].nextMessage().text == "hello from h0")
                #expect(try chats[2].nextMessage().text == "hello from h0")
            }
        }

        @Test func manualAddressWhereMulticastDoesNotPass() async throws {
            try await ChatHarness.onTestBed(hosts: 2) { bed, harness in
                // Discovery only on each host's own loopback: no beacon crosses between the hosts.
                let (server, port) = try harness.chat("far", ["--mode", "server"], bed: bed, host: bed.hosts[0])
                let (client, _) = try harness.chat(
                    "near", ["--mode", "client", "--peer", "\(bed.hosts[0].address):\(port)"], bed: bed,
                    host: bed.hosts[1])
                try client.waitForEvent("connected", peer: "far")
                try server.waitForEvent("connected", peer: "near")
                try client.send(line: "over the manual link")
                #expect(try server.nextMessage().text == "over the manual link")
            }
        }

        @Test func silentPeerIsDisconnectedAfterTheTimeout() async throws {
            try await ChatHarness.onTestBed(hosts: 2) { bed, harness in
                let (alice, _) = try harness.chat("alice", ["--disconnect-timeout", "3"], interface: nil, bed: bed,
                                                  host: bed.hosts[0])
                let (bob, _) = try harness.chat("bob", ["--disconnect-timeout", "3"], interface: nil, bed: bed,
                                                host: bed.hosts[1])
                try alice.waitForEvent("connected", peer: "bob")
                try bob.waitForEvent("connected", peer: "alice")
                // Cut bob's cable: no FIN, no RST, just silence, as when a laptop leaves the Wi-Fi.
                try bed.run(host: bed.hosts[1], ["ip", "link", "set", "eth0", "down"]).requireSuccess()
                let event = try alice.waitForEvent("disconnected", peer: "bob")
                #expect((event["reason"] as? String ?? "").contains("disconnect timeout"))
            }
        }
    }
}
