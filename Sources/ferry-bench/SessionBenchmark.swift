import FerrySecurity
import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation

/// Round-trip latency and 1 KiB message throughput between two sessions on loopback, against raw TCP on the
/// same reactor; and the time from a `ferry peers` process start until it lists an existing peer, against the
/// start of `ferry --version`.
struct SessionBenchmark {
    var messages: Int
    var roundTrips: Int

    func run() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        print("ferry-bench session: \(roundTrips) round trips, \(messages) messages of 1 KiB, loopback")
        let raw = try await rawTCP(reactor: reactor)
        let sessionID = "bench-\(UInt32.random(in: 0...UInt32.max))"
        let identities = ["bench-a": try DeviceIdentity.generate(), "bench-b": try DeviceIdentity.generate()]
        func configuration(_ name: String) -> SessionConfiguration {
            SessionConfiguration(
                sessionID: sessionID, displayName: name, mode: .peer, identity: identities[name]!, listenPort: 0,
                interfaces: ["lo"], acceptPolicy: .all)
        }
        try await Session.run(configuration: configuration("bench-a"), reactor: reactor) { a in
            try await Session.run(configuration: configuration("bench-b"), reactor: reactor) { b in
                let bInfo = try await waitForPeer(named: "bench-b", in: a)
                try await a.connect(to: bInfo.peerID, timeout: .seconds(10))
                let aID = a.localPeerID
                // B echoes everything back to A.
                let echo = Task {
                    for await event in b.events {
                        if case .dataReceived(let bytes, let from, _) = event, from.peerID == aID {
                            if bytes.count == 1 && bytes[0] == 0xFF { return }
                            try? await b.send(bytes, to: [aID])
                        }
                    }
                }
                var iterator = a.events.makeAsyncIterator()
                let clock = ContinuousClock()
                var samples: [Duration] = []
                let payload = [UInt8](repeating: 0x42, count: 64)
                for _ in 0..<roundTrips {
                    let start = clock.now
                    try await a.send(payload, to: [bInfo.peerID])
                    while let event = await iterator.next() {
                        if case .dataReceived = event { break }
                    }
                    samples.append(clock.now - start)
                }
                let latency = percentiles(samples)
                // Throughput: A sends 1 KiB messages, B echoes; A counts the echoes.
                let kib = [UInt8](repeating: 0x61, count: 1024)
                let start = clock.now
                let sender = Task {
                    for _ in 0..<messages { try await a.send(kib, to: [bInfo.peerID]) }
                }
                var received = 0
                while received < messages, let event = await iterator.next() {
                    if case .dataReceived = event { received += 1 }
                }
                try await sender.value
                let elapsed = clock.now - start
                try await a.send([0xFF], to: [bInfo.peerID])
                _ = await echo.value
                // Large messages: 16 of 16 MiB (the limit) from A to B, one way.
                let large = [UInt8](repeating: 0x62, count: Limits.maxMessageSize)
                let largeCount = 16
                let largeStart = clock.now
                let receiver = Task {
                    var got = 0
                    for await event in b.events {
                        if case .dataReceived(let bytes, _, _) = event, bytes.count == large.count { got += 1 }
                        if got == largeCount { return }
                    }
                }
                for _ in 0..<largeCount { try await a.send(large, to: [bInfo.peerID]) }
                await receiver.value
                let largeRate = Double(largeCount * large.count) / (clock.now - largeStart).seconds / 1048576
                let rate = Double(messages) / elapsed.seconds
                print(row("round trip p50", latency.p50.microseconds, "µs", baseline: raw.p50.microseconds))
                print(row("round trip p99", latency.p99.microseconds, "µs", baseline: raw.p99.microseconds))
                print(row("1 KiB messages, echoed", rate, "msg/s", baseline: raw.rate,
                          extra: String(format: " (%.1f MiB/s each way)", rate / 1024)))
                print(row("16 MiB messages, one way", largeRate, "MiB/s", baseline: raw.bulk))
            }
        }
        try await handshakeTime(configuration: configuration, reactor: reactor)
        try discoveryTime(sessionID: sessionID + "-d", reactor: reactor)
    }

    /// Connection set-up on loopback, 100 times: `connect(toAddress:)` from the TCP connect through the preface,
    /// the TLS 1.3 handshake (both certificates), the hellos, the request and the accept; against a TCP connect and
    /// two round trips on the same reactor (what the set-up would cost without TLS: hellos, request and accept).
    func handshakeTime(
        configuration: (String) -> SessionConfiguration, reactor: Reactor
    ) async throws {
        let count = 100
        let clock = ContinuousClock()
        try await Session.run(configuration: configuration("bench-a"), reactor: reactor) { a in
            try await Session.run(configuration: configuration("bench-b"), reactor: reactor) { b in
                let address = SocketAddress.ipv4(.loopback, port: await b.listenPort)
                var events = a.events.makeAsyncIterator()
                var bEvents = b.events.makeAsyncIterator()
                var samples: [Duration] = []
                for _ in 0..<count {
                    let start = clock.now
                    let peer = try await a.connect(toAddress: address, timeout: .seconds(10))
                    samples.append(clock.now - start)
                    await a.disconnect(peer.peerID)
                    while let event = await events.next() {
                        if case .peerStateChanged(let info, .disconnected, _) = event, info.peerID == peer.peerID {
                            break
                        }
                    }
                    // And until B saw it end too: connecting again before that is refused as "already connected".
                    while let event = await bEvents.next() {
                        if case .peerStateChanged(_, .disconnected, _) = event { break }
                    }
                }
                var raw: [Duration] = []
                let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
                defer { listener.close() }
                let server = Task {
                    while let connection = try? await listener.accept() {
                        for _ in 0..<2 {
                            let bytes = (try? await connection.read(maxBytes: 4096)) ?? []
                            if bytes.isEmpty { break }
                            try? await connection.write(bytes)
                        }
                        connection.close()
                    }
                }
                defer { server.cancel() }
                for _ in 0..<count {
                    let start = clock.now
                    let connection = try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(5))
                    for _ in 0..<2 {
                        try await connection.write([UInt8](repeating: 1, count: 100))
                        var got = 0
                        while got < 100 { got += try await connection.read(maxBytes: 4096).count }
                    }
                    raw.append(clock.now - start)
                    connection.close()
                }
                let tls = percentiles(samples)
                let plain = percentiles(raw)
                print(row("connect with TLS, p50", tls.p50.microseconds, "µs", baseline: plain.p50.microseconds, baselineName: "TCP+2 RTT"))
                print(row("connect with TLS, p99", tls.p99.microseconds, "µs", baseline: plain.p99.microseconds, baselineName: "TCP+2 RTT"))
            }
        }
    }

    /// Raw TCP on loopback through the same reactor: the floor for latency and the ceiling for throughput.
    func rawTCP(reactor: Reactor) async throws -> (p50: Duration, p99: Duration, rate: Double, bulk: Double) {
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        defer { listener.close() }
        async let acceptedConnection = listener.accept()
        let client = try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(5))
        let server = try await acceptedConnection
        defer { client.close(); server.close() }
        let echo = Task {
            while true {
                let bytes = try await server.read(maxBytes: 256 << 10)
                if bytes.isEmpty { return }
                try await server.write(bytes)
            }
        }
        let clock = ContinuousClock()
        var samples: [Duration] = []
        let payload = [UInt8](repeating: 0x42, count: 70)  // 64 bytes and a frame header
        for _ in 0..<roundTrips {
            let start = clock.now
            try await client.write(payload)
            var got = 0
            while got < payload.count { got += try await client.read(maxBytes: 4096).count }
            samples.append(clock.now - start)
        }
        let message = [UInt8](repeating: 0x61, count: 1030)
        let start = clock.now
        let writer = Task { for _ in 0..<messages { try await client.write(message) } }
        var received = 0
        while received < messages * message.count {
            received += try await client.read(maxBytes: 256 << 10).count
        }
        try await writer.value
        let elapsed = clock.now - start
        client.shutdownWrite()
        _ = try? await echo.value
        // Bulk: 256 MiB in 16 MiB writes, one way, counted by the reader.
        let bulkListener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        defer { bulkListener.close() }
        async let bulkAccepted = bulkListener.accept()
        let bulkClient = try await reactor.connectTCP(to: bulkListener.localAddress, timeout: .seconds(5))
        let bulkServer = try await bulkAccepted
        defer { bulkClient.close(); bulkServer.close() }
        let block = [UInt8](repeating: 0x62, count: 16 << 20)
        let bulkStart = clock.now
        let bulkWriter = Task { for _ in 0..<16 { try await bulkClient.write(block) } }
        var bulkReceived = 0
        while bulkReceived < 16 * block.count {
            bulkReceived += try await bulkServer.read(maxBytes: 256 << 10).count
        }
        try await bulkWriter.value
        let bulk = Double(bulkReceived) / (clock.now - bulkStart).seconds / 1048576
        let (p50, p99) = percentiles(samples)
        return (p50, p99, Double(messages) / elapsed.seconds, bulk)
    }

    /// Time from starting a `ferry peers` process until it prints an existing peer, median of 5, against the
    /// median time of `ferry --version` (process start and exit).
    func discoveryTime(sessionID: String, reactor: Reactor) throws {
        let binary = try FerryBinary.url.path
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        let config = try TemporaryDirectory(prefix: "ferry-bench")
        defer { config.remove() }
        let environment = ["XDG_CONFIG_HOME": config.path]
        let existing = try registry.start(
            executable: binary,
            arguments: ["chat", "--json", "--session", sessionID, "--name", "existing", "--interface", "lo",
                        "--port", "0"], environment: environment)
        _ = try existing.nextJSON { $0["event"] as? String == "ready" }
        let clock = ContinuousClock()
        var discovery: [Duration] = []
        var startup: [Duration] = []
        for _ in 0..<5 {
            let start = clock.now
            let version = try FerryProcess(executable: binary, arguments: ["--version"], environment: environment)
            _ = try version.waitForExit()
            startup.append(clock.now - start)
            let begin = clock.now
            let lister = try FerryProcess(
                executable: binary,
                arguments: ["peers", "--json", "--timeout", "0", "--session", sessionID, "--interface", "lo"],
                environment: environment)
            _ = try lister.nextJSON { $0["name"] as? String == "existing" }
            discovery.append(clock.now - begin)
            lister.signal(SIGINT)
            _ = try lister.waitForExit()
        }
        let medianDiscovery = discovery.sorted()[2]
        let medianStartup = startup.sorted()[2]
        print(row("process start to peer seen", medianDiscovery.milliseconds, "ms",
                  baseline: medianStartup.milliseconds, baselineName: "ferry --version"))
    }

    func waitForPeer(named name: String, in session: Session) async throws -> PeerInfo {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(20)
        while clock.now < deadline {
            if let peer = await session.peers().first(where: { $0.displayName == name }) { return peer }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw SessionError.unknownPeer(PeerID(rawValue: 0))
    }

    func percentiles(_ samples: [Duration]) -> (p50: Duration, p99: Duration) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (.zero, .zero) }
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
    }

    func row(_ name: String, _ value: Double, _ unit: String, baseline: Double, baselineName: String = "raw TCP",
             extra: String = "") -> String {
        let ratio = baseline > 0 ? value / baseline : 0
        return String(format: "  %-30@ %10.1f %@   %@ %10.1f %@   ratio %.2fx%@", name as NSString, value,
                      unit as NSString, baselineName as NSString, baseline, unit as NSString, ratio, extra as NSString)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Double { seconds * 1e3 }
    var microseconds: Double { seconds * 1e6 }
}
