import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

extension IntegrationTests {
    /// LocalSend discovery both ways (issue 29) between network namespaces as separate hosts, against the PyPI peers:
    /// `ferry peers` lists them from their announcements and registers, they list ferry from its announcement, and a
    /// flood of forged announcements cannot grow ferry's table past its bound. Multicast only inside the test bed.
    @Suite("LocalSend discovery", .serialized)
    struct LocalSendDiscoveryTests {
        static func onBed(
            hosts: Int, peers: [LocalSendPeers.Kind], name: String = #function,
            _ body: (TestBed, ChatHarness) async throws -> Void
        ) async throws {
            guard try TestBed.requireAvailability() else {
                try Test.cancel("network namespaces unavailable: \(TestBed.isAvailable.reason)")
            }
            for peer in peers {
                guard try LocalSendPeers.requireAvailability(peer) else {
                    try Test.cancel("LocalSend test peer \(peer.rawValue) not installed: run scripts/localsend-peers")
                }
            }
            TestBed.removeStale()
            try await TestBed.with(hosts: hosts, name: "ld") { bed in
                let harness = try ChatHarness(name)
                defer { harness.registry.stopAll() }
                try await body(bed, harness)
            }
        }

        /// `ferry peers --json` on `host`, listing until stopped.
        static func peers(_ harness: ChatHarness, bed: TestBed, on host: TestHost, name: String, _ extra: [String] = [])
            throws -> FerryProcess
        {
            harness.registry.register(
                try bed.startFerry(
                    on: host,
                    ["peers", "--json", "--timeout", "0", "--session", harness.session, "--name", name] + extra,
                    environment: harness.environment(name)))
        }

        /// The fingerprint `ferry id` gives for the install of `name`.
        static func fingerprint(_ harness: ChatHarness, name: String) throws -> String {
            let id = harness.registry.register(
                try FerryProcess.ferry(["id", "--json"], environment: harness.environment(name)))
            let line = try id.nextJSON { $0["event"] as? String == "identity" }
            return try #require(line["localSendFingerprint"] as? String)
        }

        @Test func ferryPeersListsALocalsenddDaemonWithItsAliasModelTypeAndCertificateFingerprint() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, harness in
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])
                let peers = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "west")
                let line = try peers.nextJSON(timeout: .seconds(30)) {
                    $0["event"] as? String == "localsend" && $0["name"] as? String == "bob"
                }
                #expect(line["fingerprint"] as? String == bob.fingerprint, "\(line)")
                #expect(line["address"] as? String == "\(bed.hosts[1].address):53317", "\(line)")
                #expect(line["protocol"] as? String == "https" && line["usable"] as? Bool == true, "\(line)")
                #expect(line["state"] as? String == "available", "\(line)")
                #expect(line["version"] as? String == "2.2", "\(line)")
                #expect(line["deviceType"] is String, "\(line)")
                try peers.terminate()
            }
        }

        @Test func ferryPeersTextShowsALocalSendRowUnderTheHeader() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, harness in
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])
                let peers = harness.registry.register(
                    try bed.startFerry(
                        on: bed.hosts[0], ["peers", "--timeout", "0", "--session", harness.session, "--name", "west"],
                        environment: harness.environment("west")))
                #expect(try peers.nextLine(timeout: .seconds(30)) == IntegrationTests.PeersTableTests.header)
                let row = try peers.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("bob ") }
                // Alias, the fingerprint's first 8 hex digits, address, state, and what it is.
                #expect(row.contains("  \(bob.fingerprint.prefix(8))   "), "\(row)")
                #expect(row.contains("\(bed.hosts[1].address):53317"), "\(row)")
                #expect(row.contains("  available     LocalSend: "), "\(row)")
                try peers.terminate()
            }
        }

        @Test func aLocalsenddDaemonListsFerryByTheFingerprintFerryIdPrints() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, harness in
                let expected = try Self.fingerprint(harness, name: "west")
                let peers = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "west")
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])
                let ferry = try bob.waitForDevice(alias: "west", timeout: .seconds(30))
                #expect(ferry["fingerprint"] as? String == expected, "\(ferry) \(peers.capturedOutput())")
                #expect(ferry["deviceModel"] as? String == "ferry", "\(ferry)")
                #expect((ferry["ip"] as? String ?? "").hasSuffix(bed.hosts[0].address), "\(ferry)")
                try peers.terminate()
            }
        }

        @Test func ferryPeersListsALocalSendCLIReceiverAndALocalSendAppThatAnnounce() async throws {
            try await Self.onBed(hosts: 3, peers: [.localsendCLI, .localsend]) { bed, harness in
                // `localsend` 0.1.2 announces once as it starts, and answers an announcement only by `register`, with
                // no multicast fallback (the apps fall back): `ferry peers` runs no HTTPS server, so it hears this peer
                // only from its start-up announcement, and starts first. localsend-cli announces every few seconds.
                let peers = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "west")
                let cli = try LocalSendCLIReceiver(on: bed.hosts[1])
                let app = try LocalSendApp(.receive, alias: "carol", on: bed.hosts[2])
                var addresses: [String: [String: Any]] = [:]
                while addresses.count < 2 {
                    let line = try peers.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "localsend" }
                    addresses[line["address"] as? String ?? ""] = line
                }
                let fromCLI = try #require(addresses["\(bed.hosts[1].address):53317"], "\(addresses)")
                let fromApp = try #require(addresses["\(bed.hosts[2].address):53317"], "\(addresses)")
                // localsend-cli announces its fingerprint in lower case; ferry lists it as the hash, in upper case.
                let cliFingerprint = try #require(fromCLI["fingerprint"] as? String)
                #expect(cliFingerprint == cliFingerprint.uppercased() && cliFingerprint.count == 64, "\(fromCLI)")
                #expect(fromApp["name"] as? String == "carol" && fromApp["usable"] as? Bool == true, "\(fromApp)")
                _ = cli
                _ = app
                try peers.terminate()
            }
        }

        @Test func withNoLocalsendFerryPeersNeitherListsNorAnnounces() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, harness in
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])
                let peers = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "west", ["--no-localsend", "-v"])
                // LocalSend discovery would start before the session, which logs this line once it is up.
                _ = try peers.waitForErrorLine(timeout: .seconds(30)) { $0.contains("discovery on") }
                // A second ferry with LocalSend on, started after: once bob lists it, bob would have listed the first
                // too, had it announced (both announce as they start, and bob was up before either).
                let witness = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "east")
                _ = try witness.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "localsend" }
                _ = try bob.waitForDevice(alias: "east", timeout: .seconds(30))
                let aliases = try Self.aliases(listedBy: bob)
                #expect(!aliases.contains("west"), "\(aliases)")
                try witness.terminate()
                try peers.terminate()
                let printed = Self.localSendLines(peers)
                #expect(printed.isEmpty, "\(peers.capturedOutput())")
            }
        }

        static func aliases(listedBy daemon: LocalSendDaemon) throws -> [String] {
            let devices = try daemon.state()["devices"] as? [[String: Any]] ?? []
            return devices.compactMap { $0["alias"] as? String }
        }

        /// The `localsend` events the process printed.
        static func localSendLines(_ process: FerryProcess) -> [[String: Any]] {
            process.allStdoutLines.compactMap { line -> [String: Any]? in
                guard let data = line.data(using: .utf8),
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    object["event"] as? String == "localsend"
                else { return nil }
                return object
            }
        }

        /// The fingerprints of the devices listed, and of those reported lost.
        static func fingerprints(_ process: FerryProcess) -> (listed: Set<String>, lost: Set<String>) {
            let lines = localSendLines(process)
            let listed = Set(lines.compactMap { $0["fingerprint"] as? String })
            let lost = Set(
                lines.filter { $0["state"] as? String == "unavailable" }.compactMap { $0["fingerprint"] as? String })
            return (listed, lost)
        }

        @Test func aFloodOfForgedAnnouncementsIsBoundedByTheTable() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, harness in
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])
                let peers = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "west")
                _ = try peers.nextJSON(timeout: .seconds(30)) {
                    $0["event"] as? String == "localsend" && $0["name"] as? String == "bob"
                }
                // 2,000 announcements with random fingerprints from host 1, at the group (announce: false: the answers'
                // pacing is the table's unit tests'; here the bound on the list).
                let reactor = try Reactor()
                defer { reactor.shutdown() }
                let source = bed.hosts[1]
                let socket = try bed.perform(in: source) { try reactor.openUDP(bindingTo: .ipv4(.any, port: 0)) }
                let group = try #require(IPv4Address("224.0.0.167"))
                try socket.setMulticastInterface(try #require(IPv4Address(source.address)))
                for index in 0..<2_000 {
                    let hash = (0..<32).map { _ in UInt8.random(in: 0...255) }
                    let forged = LocalSendDevice(
                        alias: "forged-\(index)", version: "2.1", deviceModel: "x", deviceType: "mobile",
                        fingerprint: hash.map { String(format: "%02X", $0) }.joined(), port: 53317, scheme: "https",
                        announce: false)
                    try socket.send(forged.encoded(), to: .ipv4(group, port: 53317))
                }
                socket.close()
                // The table holds 256 devices: bob and 255 forged ones; the 256th forged line never comes.
                var forgedListed = Set<String>()
                while forgedListed.count < 255 {
                    let line = try peers.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "localsend" }
                    if (line["name"] as? String ?? "").hasPrefix("forged-") {
                        forgedListed.insert(line["fingerprint"] as? String ?? "")
                    }
                }
                // Bob, listed before the flood, is still listed: the flood did not push it out.
                try peers.terminate()
                let (listed, lost) = Self.fingerprints(peers)
                #expect(listed.count == 256, "\(listed.count) devices listed")
                #expect(listed.contains(bob.fingerprint))
                #expect(!lost.contains(bob.fingerprint))
            }
        }

        @Test func aPortHeldWithoutSharingIsSaidInOneLineAndFerryPeersGoesOn() async throws {
            try await Self.onBed(hosts: 2, peers: []) { bed, harness in
                // A program holding UDP 53317 without SO_REUSEADDR (what a LocalSend app that does not share it does).
                let reactor = try Reactor()
                defer { reactor.shutdown() }
                let holder = try bed.perform(in: bed.hosts[0]) {
                    try reactor.openUDP(bindingTo: .ipv4(.any, port: 53317))
                }
                defer { holder.close() }
                let chat = harness.registry.register(
                    try bed.startFerry(
                        on: bed.hosts[1],
                        ["chat", "--json", "--session", harness.session, "--name", "east", "--accept", "all"],
                        environment: harness.environment("east")))
                let peers = try Self.peers(harness, bed: bed, on: bed.hosts[0], name: "west")
                let error = try peers.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "error" }
                let message = error["message"] as? String ?? ""
                #expect(message.hasPrefix("LocalSend discovery is off: UDP port 53317 is taken"), "\(message)")
                // ... and ferry's own protocol goes on: the chat on the other host is listed.
                let east = try peers.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "peer" }
                #expect(east["name"] as? String == "east", "\(east)")
                let errors = peers.allStdoutLines.filter { $0.contains("LocalSend discovery is off") }
                #expect(errors.count == 1, "\(peers.capturedOutput())")
                try peers.terminate()
                try chat.terminate()
            }
        }
    }
}
