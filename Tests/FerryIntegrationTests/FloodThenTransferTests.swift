import Foundation
import FerryTestSupport
import FerryWire
import Glibc
import Testing

extension IntegrationTests {
    /// Promise 4's last sentence: a legitimate transfer still succeeds right after a flood. A real `ferry receive`
    /// is flooded with links that stall in the preface, links that stall mid-TLS (a ClientHello, then nothing) and
    /// many links from one address; with the flood still open, a real `ferry send` delivers a file.
    @Suite(.serialized) struct FloodThenTransferTests {
        /// One flood link: connects from `source`, sends `bytes`, and reports whether the receiver took it (it sent
        /// its own preface) or closed it at once (nothing, then the end).
        static func flood(port: Int, from source: String, sending bytes: [UInt8]) throws
            -> (socket: LoopbackSocket, taken: Bool)
        {
            let socket = try LoopbackSocket.connect(port: UInt16(port), from: source, receiveTimeoutSeconds: 60)
            try? socket.write(bytes)
            return (socket, socket.read(upTo: Preface.length) == Preface.encode())
        }

        @Test func aTransferSucceedsRightAfterAPreAuthenticationFlood() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("after-the-flood.bin", size: 3 << 20, seed: 4)
            let expected = try TransferHarness.sha256(file.path)
            let (receiver, port) = try harness.receiver()
            let baseline = try HostileInputTests.openDescriptors(of: receiver.pid)
            let clientHello = try await StrangerLink.prefaceAndClientHello()

            var flood: [LoopbackSocket] = []
            defer { flood.forEach { $0.close() } }
            var taken = 0
            var closedAtOnce = 0
            // 40 hosts stall in the preface, 40 stall after their ClientHello, and one host opens 60 links.
            let waves: [(source: (Int) -> String, count: Int, bytes: [UInt8])] = [
                ({ "127.0.5.\(1 + $0)" }, 40, Array(Preface.encode().prefix(3))),
                ({ "127.0.6.\(1 + $0)" }, 40, clientHello),
                ({ _ in "127.0.7.1" }, 60, []),
            ]
            for wave in waves {
                for index in 0..<wave.count {
                    let link = try Self.flood(port: port, from: wave.source(index), sending: wave.bytes)
                    flood.append(link.socket)
                    if link.taken { taken += 1 } else { closedAtOnce += 1 }
                    if wave.bytes == clientHello, link.taken {
                        // The receiver answers the ClientHello (a TLS handshake record) and waits for the rest.
                        #expect(link.socket.read(upTo: 1) == [0x16], "no ServerHello")
                    }
                }
            }
            // Usually exactly 80 + 8 and 52; on a machine slow enough for the 10 s handshake deadline to free some of
            // the last host's 8 slots meanwhile, a few more are taken.
            #expect(taken >= 80 + 8, "every link of the first 80 hosts was taken, and 8 of the last host's")
            #expect(closedAtOnce > 0 && taken + closedAtOnce == 140, "the last host was held to its 8 pending links")
            let during = try HostileInputTests.openDescriptors(of: receiver.pid)
            #expect(during - baseline <= 64 + 8, "descriptors grew from \(baseline) to \(during)")

            // The flood is still open: a real sender from 127.0.0.1 gets its file through.
            let (status, summary, _) = try harness.send([file.path], to: [port])
            #expect(status == 0, "\(summary ?? [:])")
            let received = harness.inbox.path + "/after-the-flood.bin"
            #expect(try TransferHarness.sha256(received) == expected)
            #expect(try receiver.waitForExit(timeout: .seconds(120)) == 0, "receive --once ends after the transfer")
        }
    }
}
