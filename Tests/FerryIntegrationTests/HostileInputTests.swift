import Foundation
import FerrySecurity
import FerryTestSupport
import FerryWire
import Glibc
import Testing

extension IntegrationTests {
    /// What a hostile process on the network can throw at a `ferry` process before it is a peer: in the clear
    /// (where only the preface and the TLS handshake listen), and inside TLS with a certificate of its own.
    @Suite(.serialized) struct HostileInputTests {
        /// How many descriptors the process has open; throws when /proc cannot tell (a count of -1 would pass
        /// every "at most" check).
        static func openDescriptors(of pid: Int32) throws -> Int {
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else {
                throw TestSupportError.systemCall("listing /proc/\(pid)/fd", errno: errno)
            }
            return entries.count
        }

        /// The chat's peer table, as `/peers` lists it: in `--json` mode one `peerInfo` event a row; the notice that
        /// `/help`, typed right after, prints marks the end of the list (the chat reads its input in order).
        static func peerTable(of chat: FerryProcess) throws -> [[String: Any]] {
            try chat.send(line: "/peers")
            try chat.send(line: "/help")
            var rows: [[String: Any]] = []
            while true {
                let object = try chat.nextJSON { ["peerInfo", "notice"].contains($0["event"] as? String) }
                if object["event"] as? String == "notice" { return rows }
                rows.append(object)
            }
        }

        static func names(_ rows: [[String: Any]]) -> [String] {
            rows.compactMap { ($0["peer"] as? [String: Any])?["name"] as? String }
        }

        @Test func garbageAndHostileLengthsCloseTheLinkAndTheProcessLivesOn() throws {
            let harness = try ChatHarness()
            let (victim, port) = try harness.chat("victim")
            var generator = SystemRandomNumberGenerator()
            let attacks: [[UInt8]] = [
                (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) },
                Preface.encode() + [0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF],  // a 4 GiB hello
                Preface.encode() + [0x00, 0x05, 0x00, 0x00, 0x00, 0x02, 0x41, 0x41],  // a message before the hello
                Preface.encode() + [0x00, 0x01, 0x00, 0x00, 0x00, 0x10] + Array(repeating: 0xEE, count: 16),
                Array("FERRY".utf8) + [0x00, 0x09, 0x00],  // a future major version
                Array(Preface.encode().prefix(5)),  // truncated preface, then nothing
            ]
            for (index, attack) in attacks.enumerated() {
                let socket = try LoopbackSocket.connect(port: UInt16(port))
                defer { socket.close() }
                try? socket.write(attack)
                if index == attacks.count - 1 {
                    socket.shutdown(Int32(SHUT_WR))
                }
                #expect(socket.waitForClose(timeoutSeconds: 30), "attack \(index) left the link open")
            }
            // Still serving: a real peer connects and talks.
            let (friend, _) = try harness.chat("friend")
            try victim.waitForEvent("connected", peer: "friend")
            // Both sides: the acceptor is connected when it sends its accept, the initiator only once it arrives; a
            // line typed before then goes to no one.
            try friend.waitForEvent("connected", peer: "victim")
            try friend.send(line: "still there?")
            #expect(try victim.nextMessage().text == "still there?")
        }

        @Test func fiveHundredIdleConnectionsKeepDescriptorsBoundedAndPeersServed() throws {
            let harness = try ChatHarness()
            let (victim, port) = try harness.chat("victim")
            let baseline = try Self.openDescriptors(of: victim.pid)
            var idle: [LoopbackSocket] = []
            defer { idle.forEach { $0.close() } }
            for index in 0..<500 {
                // 400 hosts with one connection each (the global cap), and 100 from one host (the per-address cap).
                let source = index < 400 ? "127.0.\(1 + index / 200).\(1 + index % 200)" : "127.0.9.9"
                let socket = try LoopbackSocket.connect(port: UInt16(port), from: source)
                idle.append(socket)
                if index % 5 == 0 {
                    // Some send a cleartext hello (valid, of this session) after the preface: refused by TLS.
                    let hello = Hello(
                        peerID: PeerID(rawValue: UInt64(index + 1)),
                        deviceID: DeviceID(bytes: Array(repeating: 9, count: 32))!, mode: .peer, capabilities: [],
                        listenPort: 0, datagramPort: 0, sessionID: harness.session, displayName: "idler\(index)")
                    try? socket.write(Preface.encode() + SessionMessage.hello(hello).encoded())
                }
            }
            // A real peer still gets through while the 500 are held open.
            let (friend, _) = try harness.chat("friend")
            try victim.waitForEvent("connected", peer: "friend")
            // Both sides: the acceptor is connected when it sends its accept, the initiator only once it arrives; a
            // line typed before then goes to no one.
            try friend.waitForEvent("connected", peer: "victim")
            try friend.send(line: "through the crowd")
            #expect(try victim.nextMessage().text == "through the crowd")
            let during = try Self.openDescriptors(of: victim.pid)
            // 64 pending links at most (of them 8 from 127.0.9.9), plus the friend's link and a little slack.
            #expect(during - baseline <= 64 + 8, "descriptors grew from \(baseline) to \(during)")
        }

        /// Inside TLS, with a certificate of its own: a 4 GiB hello header, a message before the hello, a hello
        /// that names another device than its certificate, and a hello over 1 KiB. Each closes the link.
        @Test func aStrangerWithItsOwnCertificateIsClosedWhateverItSends() async throws {
            let harness = try ChatHarness()
            let (victim, port) = try harness.chat("victim")
            let baseline = try Self.openDescriptors(of: victim.pid)
            let someoneElse = try DeviceIdentity.generate().deviceID
            let oversized: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x04, 0x01] + [UInt8](repeating: 0, count: 1025)
            let attacks: [(name: String, bytes: (StrangerLink) -> [UInt8], goodbyeMentions: String?)] = [
                ("a 4 GiB hello", { _ in [0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF] }, nil),
                ("a message before the hello", { _ in [0x00, 0x05, 0x00, 0x00, 0x00, 0x02, 0x41, 0x41] }, nil),
                (
                    "a hello naming another device",
                    { $0.hello(session: harness.session, name: "impostor", deviceID: someoneElse) }, "certificate"
                ),
                ("a hello of 1025 bytes", { _ in oversized }, nil),
            ]
            for attack in attacks {
                let stranger = try await StrangerLink.open(port: port)
                defer { stranger.close() }
                try await stranger.send(attack.bytes(stranger))
                let (messages, closed) = await stranger.messagesUntilClosed()
                #expect(closed, "\(attack.name) left the link open")
                if let mention = attack.goodbyeMentions {
                    let details = messages.compactMap { message -> String? in
                        if case .goodbye(let goodbye) = message { return goodbye.detail }
                        return nil
                    }
                    #expect(details.contains { $0.contains(mention) }, "\(attack.name): \(messages)")
                }
            }
            // Still serving, and holding nothing for the strangers.
            let (friend, _) = try harness.chat("friend")
            try victim.waitForEvent("connected", peer: "friend")
            // Both sides: the acceptor is connected when it sends its accept, the initiator only once it arrives; a
            // line typed before then goes to no one.
            try friend.waitForEvent("connected", peer: "victim")
            try friend.send(line: "after the strangers")
            #expect(try victim.nextMessage().text == "after the strangers")
            let after = try Self.openDescriptors(of: victim.pid)
            #expect(after - baseline <= 8, "descriptors grew from \(baseline) to \(after)")
        }

        /// Strangers that complete TLS and send a valid hello of this session (each with a new device and peer ID),
        /// then sit there: from many hosts, and many from one.
        @Test func aHelloFloodFromStrangersKeepsDescriptorsAndPeersBounded() async throws {
            let harness = try ChatHarness()
            let (victim, port) = try harness.chat("victim")
            let baseline = try Self.openDescriptors(of: victim.pid)
            var strangers: [StrangerLink] = []
            defer { strangers.forEach { $0.close() } }
            var refusedAtOnce = 0
            for index in 0..<120 {
                let source = index < 90 ? "127.0.3.\(1 + index)" : "127.0.4.1"
                let stranger: StrangerLink
                do {
                    stranger = try await StrangerLink.open(port: port, from: source)
                } catch {
                    refusedAtOnce += 1  // its host already has 8 links waiting: closed before the handshake
                    continue
                }
                strangers.append(stranger)
                try await stranger.send(stranger.hello(session: harness.session, name: "flood\(index)"))
            }
            #expect(refusedAtOnce >= 30 - 8, "the one host got more than its 8 pending links")
            let during = try Self.openDescriptors(of: victim.pid)
            #expect(during - baseline <= 64 + 8, "descriptors grew from \(baseline) to \(during)")
            // The peer table: a stranger's hello makes a row only while its link is one of the 64 pending ones.
            let flooded = Self.names(try Self.peerTable(of: victim)).filter { $0.hasPrefix("flood") }
            #expect(flooded.count <= 64, "\(flooded.count) strangers in the peer table")
            // A real peer still gets through while the flood holds what it can.
            let (friend, _) = try harness.chat("friend")
            try victim.waitForEvent("connected", peer: "friend")
            // Both sides: the acceptor is connected when it sends its accept, the initiator only once it arrives; a
            // line typed before then goes to no one.
            try friend.waitForEvent("connected", peer: "victim")
            try friend.send(line: "through the strangers")
            #expect(try victim.nextMessage().text == "through the strangers")
            // The listing shows what the table holds: the friend is in it, and the strangers are still bounded.
            let table = Self.names(try Self.peerTable(of: victim))
            #expect(table.contains("friend"), "\(table)")
            #expect(table.filter { $0.hasPrefix("flood") }.count <= 64, "\(table.count) rows")
        }

        @Test func beaconFloodKeepsThePeerTableBounded() throws {
            let harness = try ChatHarness()
            let lister = try harness.peers()
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            #expect(fd >= 0)
            defer { close(fd) }
            var interface = in_addr(s_addr: inet_addr("127.0.0.1"))
            setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &interface, socklen_t(MemoryLayout<in_addr>.size))
            var group = sockaddr_in()
            group.sin_family = sa_family_t(AF_INET)
            group.sin_port = in_port_t(Discovery.port.bigEndian)
            group.sin_addr.s_addr = inet_addr(Discovery.multicastGroup)
            var generator = SystemRandomNumberGenerator()
            for index in 0..<2000 {
                let beacon = Beacon(
                    flags: [.available], mode: .peer, peerID: PeerID(rawValue: UInt64.random(in: 1...UInt64.max)),
                    deviceID: DeviceID(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })!,
                    tcpPort: 9, sessionID: harness.session, displayName: "flood\(index)")
                let bytes = beacon.encoded()
                _ = withUnsafePointer(to: &group) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        bytes.withUnsafeBytes {
                            sendto(fd, $0.baseAddress, $0.count, 0, address, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
            }
            // A real peer announced after the flood is still listed; the table never passed its bound.
            let (_, _) = try harness.chat("real")
            _ = try lister.nextJSON { $0["event"] as? String == "peer" && $0["name"] as? String == "real" }
            lister.signal(SIGINT)
            _ = try lister.waitForExit()
            let flooded = Set(
                lister.allStdoutLines.compactMap { line -> String? in
                    guard let data = line.data(using: .utf8),
                        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                        let name = object["name"] as? String, name.hasPrefix("flood")
                    else { return nil }
                    return name
                })
            #expect(flooded.count <= 256, "\(flooded.count) flood peers listed")
        }
    }
}
