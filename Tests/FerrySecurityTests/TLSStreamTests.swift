@testable import FerrySecurity
import FerrySystem
import FerryWire
import Testing

/// Two TLS streams over a real loopback TCP connection.
struct TLSPair {
    let client: TLSStream
    let server: TLSStream
    let clientIdentity: DeviceIdentity
    let serverIdentity: DeviceIdentity
    let clientTCP: TCPConnection
    let serverTCP: TCPConnection

    func close() {
        client.close()
        server.close()
    }
}

func withTLSPair<T: Sendable>(
    clientIdentity: DeviceIdentity? = nil, serverIdentity: DeviceIdentity? = nil,
    _ body: (TLSPair, Reactor) async throws -> T
) async throws -> T {
    let reactor = try Reactor()
    defer { reactor.shutdown() }
    let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
    defer { listener.close() }
    let clientIdentity = try clientIdentity ?? DeviceIdentity.generate()
    let serverIdentity = try serverIdentity ?? DeviceIdentity.generate()
    async let accepted = listener.accept()
    let clientTCP = try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(60))
    let serverTCP = try await accepted
    let pair = TLSPair(
        client: try TLSStream(over: clientTCP, context: TLSContext(identity: clientIdentity), role: .client),
        server: try TLSStream(over: serverTCP, context: TLSContext(identity: serverIdentity), role: .server),
        clientIdentity: clientIdentity, serverIdentity: serverIdentity, clientTCP: clientTCP, serverTCP: serverTCP)
    defer { pair.close() }
    return try await body(pair, reactor)
}

@Suite("TLS stream", .timeLimit(.minutes(2)))
struct TLSStreamTests {
    @Test func bothSidesLearnTheOthersDeviceIDAndTLS13() async throws {
        try await withTLSPair { pair, _ in
            async let serverPeer = pair.server.handshake()
            let clientPeer = try await pair.client.handshake()
            let serverSaw = try await serverPeer
            #expect(clientPeer.deviceID == pair.serverIdentity.deviceID)
            #expect(serverSaw.deviceID == pair.clientIdentity.deviceID)
            #expect(clientPeer.version == .current)
            #expect(clientPeer.cipher.hasPrefix("TLS_"))
        }
    }

    @Test func bytesFlowBothWaysInOrder() async throws {
        try await withTLSPair { pair, _ in
            let payload = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
            let echo = Task {
                var total = 0
                while total < payload.count {
                    let bytes = try await pair.server.read(maxBytes: 100_000)
                    if bytes.isEmpty { break }
                    total += bytes.count
                    try await pair.server.write(bytes)
                }
            }
            let writer = Task {
                var offset = 0
                var size = 1
                while offset < payload.count {
                    let end = min(payload.count, offset + size)
                    try await pair.client.write(Array(payload[offset..<end]))
                    offset = end
                    size = size >= 1 << 20 ? 1 : size * 5
                }
            }
            var received: [UInt8] = []
            while received.count < payload.count {
                let bytes = try await pair.client.read(maxBytes: 256 << 10)
                if bytes.isEmpty { break }
                received += bytes
            }
            try await writer.value
            try await echo.value
            #expect(received == payload)
        }
    }

    @Test func bothEndsExportTheSameKeyingMaterial() async throws {
        try await withTLSPair { pair, _ in
            #expect(pair.client.exportKeyingMaterial(label: "EXPORTER-test", context: [1], length: 32) == nil)
            async let serverPeer = pair.server.handshake()
            try await pair.client.handshake()
            _ = try await serverPeer
            let client = pair.client.exportKeyingMaterial(label: "EXPORTER-test", context: [1, 2], length: 32)
            let server = pair.server.exportKeyingMaterial(label: "EXPORTER-test", context: [1, 2], length: 32)
            #expect(client != nil)
            #expect(client == server)
            let otherLabel = pair.server.exportKeyingMaterial(label: "EXPORTER-other", context: [1, 2], length: 32)
            #expect(otherLabel != client)
        }
    }

    @Test func aPeerThatIsNotFerryIsRefusedAtThePreface() async throws {
        try await withTLSPair { pair, _ in
            try await pair.clientTCP.write(Array("GET / HTTP/1.1\r\n\r\n".utf8))
            await #expect(throws: SecurityError.self) { try await pair.server.handshake() }
            do {
                _ = try await pair.server.read(maxBytes: 10)
                Issue.record("read after a failed handshake returned")
            } catch let error as SecurityError {
                guard case .badPreface = error else { Issue.record("unexpected \(error)"); return }
            }
        }
    }

    @Test func anotherMajorVersionIsRefusedAtThePreface() async throws {
        try await withTLSPair { pair, _ in
            try await pair.clientTCP.write([0x46, 0x45, 0x52, 0x52, 0x59, 0x00, 9, 0])
            do {
                try await pair.server.handshake()
                Issue.record("a future major version was accepted")
            } catch let error as SecurityError {
                #expect(error.description.contains("not a ferry peer"))
            }
        }
    }

    @Test func cleartextFramesAfterThePrefaceFailTheHandshake() async throws {
        try await withTLSPair { pair, _ in
            var bytes = Preface.encode()
            bytes += [0x00, 0x01, 0x00, 0x00, 0x00, 0x10] + [UInt8](repeating: 0x41, count: 16)
            try await pair.clientTCP.write(bytes)
            do {
                try await pair.server.handshake()
                Issue.record("a cleartext hello passed as TLS")
            } catch let error as SecurityError {
                guard case .handshakeFailed = error else { Issue.record("unexpected \(error)"); return }
            }
        }
    }

    @Test func writesWaitForTheHandshakeAndFailWhenItFails() async throws {
        try await withTLSPair { pair, _ in
            let early = Task { try await pair.server.write([1, 2, 3]) }
            try await pair.clientTCP.write(Array("nonsense".utf8))
            await #expect(throws: SecurityError.self) { try await pair.server.handshake() }
            await #expect(throws: (any Error).self) { try await early.value }
        }
    }
}

@Suite("Pairing code and datagram keys", .timeLimit(.minutes(2)))
struct LinkSecretsTests {
    @Test func bothEndsDeriveTheSameSixDigitCode() async throws {
        try await withTLSPair { pair, _ in
            async let serverPeer = pair.server.handshake()
            try await pair.client.handshake()
            _ = try await serverPeer
            let (initiatorNonce, acceptorNonce) = (PairingCode.nonce(), PairingCode.nonce())
            let client = PairingCode.derive(
                from: pair.client, local: pair.clientIdentity.deviceID, peer: pair.serverIdentity.deviceID,
                initiatorNonce: initiatorNonce, acceptorNonce: acceptorNonce)
            let server = PairingCode.derive(
                from: pair.server, local: pair.serverIdentity.deviceID, peer: pair.clientIdentity.deviceID,
                initiatorNonce: initiatorNonce, acceptorNonce: acceptorNonce)
            #expect(client != nil)
            #expect(client == server)
            #expect(client?.count == 6)
            #expect(client?.allSatisfy(\.isNumber) == true)
            // Either nonce changes the code (one chance in a million to collide per try: three tries).
            var others = Set<String>()
            for _ in 0..<3 {
                others.insert(PairingCode.derive(
                    from: pair.client, local: pair.clientIdentity.deviceID, peer: pair.serverIdentity.deviceID,
                    initiatorNonce: initiatorNonce, acceptorNonce: PairingCode.nonce()) ?? "")
            }
            #expect(others.count >= 2 || !others.contains(client ?? ""))
        }
    }

    @Test func codesOfTwoTLSSessionsDiffer() async throws {
        // What a man in the middle faces: each side's code comes from its own TLS session.
        let alice = try DeviceIdentity.generate()
        let bob = try DeviceIdentity.generate()
        var codes = Set<String>()
        let nonces = (PairingCode.nonce(), PairingCode.nonce())  // the same nonces: only the TLS session differs
        for _ in 0..<3 {
            try await withTLSPair(clientIdentity: alice, serverIdentity: bob) { pair, _ in
                async let serverPeer = pair.server.handshake()
                try await pair.client.handshake()
                _ = try await serverPeer
                codes.insert(
                    PairingCode.derive(
                        from: pair.client, local: alice.deviceID, peer: bob.deviceID, initiatorNonce: nonces.0,
                        acceptorNonce: nonces.1) ?? "")
            }
        }
        #expect(codes.count >= 2)  // 3 equal codes out of a million: the exporter is not bound to the session
    }

    @Test func codeDigitsAndReadableForm() {
        #expect(PairingCode.code(from: [0, 0, 0, 0, 0, 0, 0, 7]) == "000007")
        #expect(PairingCode.code(from: [0, 0, 0, 0, 0, 0x0F, 0x42, 0x40]) == "000000")
        #expect(PairingCode.readable("012345") == "012 345")
    }

    @Test func datagramsSealedOnOneEndOpenOnTheOtherAndNothingElse() async throws {
        try await withTLSPair { pair, _ in
            async let serverPeer = pair.server.handshake()
            try await pair.client.handshake()
            _ = try await serverPeer
            let initiator = try #require(DatagramCipher.pair(for: pair.client, isInitiator: true))
            let acceptor = try #require(DatagramCipher.pair(for: pair.server, isInitiator: false))
            let header = Datagram.header(sessionTag: 1, sender: PeerID(rawValue: 9), sequence: 1)
            let sealed = try #require(initiator.send.seal(Array("ping".utf8), header: header, sequence: 1))
            #expect(sealed.count == 4 + Datagram.tagLength)
            #expect(acceptor.receive.open(sealed[...], header: header[...], sequence: 1) == Array("ping".utf8))
            // The wrong direction's key, another sequence number, a changed header or byte: refused.
            #expect(acceptor.send.open(sealed[...], header: header[...], sequence: 1) == nil)
            #expect(acceptor.receive.open(sealed[...], header: header[...], sequence: 2) == nil)
            var otherHeader = header
            otherHeader[3] = 1
            #expect(acceptor.receive.open(sealed[...], header: otherHeader[...], sequence: 1) == nil)
            for index in sealed.indices {
                var flipped = sealed
                flipped[index] ^= 0x01
                #expect(acceptor.receive.open(flipped[...], header: header[...], sequence: 1) == nil)
            }
            let empty = try #require(acceptor.send.seal([], header: header, sequence: 1))
            #expect(initiator.receive.open(empty[...], header: header[...], sequence: 1) == [])
            let largest = [UInt8](repeating: 0xAB, count: Limits.maxDatagramPayload)
            let sealedLargest = try #require(acceptor.send.seal(largest, header: header, sequence: 5))
            #expect(initiator.receive.open(sealedLargest[...], header: header[...], sequence: 5) == largest)
        }
    }
}

@Suite("TLS configuration", .timeLimit(.minutes(1)))
struct TLSConfigurationTests {
    @Test func aes128GCMIsNegotiatedFirst() async throws {
        try await withTLSPair { pair, _ in
            async let serverPeer = pair.server.handshake()
            let client = try await pair.client.handshake()
            _ = try await serverPeer
            #expect(client.cipher == "TLS_AES_128_GCM_SHA256")
        }
    }

    /// PROTOCOL 3.1 names X25519 as the one group and Ed25519 as the one signature algorithm, both ways.
    @Test func theKeyExchangeIsX25519AndBothSidesSignWithEd25519() async throws {
        try await withTLSPair { pair, _ in
            async let serverPeer = pair.server.handshake()
            let client = try await pair.client.handshake()
            let server = try await serverPeer
            #expect(client.group == "X25519")
            #expect(server.group == "X25519")
            #expect(client.signature == "ED25519")
            #expect(server.signature == "ED25519")
        }
    }
}
