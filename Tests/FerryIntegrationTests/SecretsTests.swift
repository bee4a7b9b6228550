import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

extension IntegrationTests {
    /// Promise 8: the private key never leaves `identity.pem` — not in a process's arguments or environment, not
    /// in its output with the most verbose logging, not in a discovery beacon.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct SecretsTests {
        /// The base64 lines of the PEM's private key and the 32-byte Ed25519 seed at the end of its PKCS#8 DER.
        static func keyMaterial(pemAt path: String) throws -> (base64Lines: [String], seed: [UInt8]) {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let lines = text.components(separatedBy: "\n")
            guard let begin = lines.firstIndex(of: "-----BEGIN PRIVATE KEY-----"),
                let end = lines.firstIndex(of: "-----END PRIVATE KEY-----"), begin < end
            else { throw POSIXError(.EINVAL) }
            let body = Array(lines[(begin + 1)..<end])
            guard let der = Data(base64Encoded: body.joined()), der.count >= 32 else { throw POSIXError(.EINVAL) }
            return (body, Array(der.suffix(32)))
        }

        static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
            guard !needle.isEmpty, haystack.count >= needle.count else { return false }
            return (0...(haystack.count - needle.count)).contains { start in
                haystack[start] == needle[0] && Array(haystack[start..<(start + needle.count)]) == needle
            }
        }

        /// A file of /proc/PID; throws when it cannot be read (a process that already ended has no arguments to
        /// search, and an empty haystack would pass every check below).
        static func procFile(_ pid: Int32, _ name: String) throws -> [UInt8] {
            // read(2) until the end: /proc files report a size of 0, so whole-file reads that trust the size
            // (Data(contentsOf:)) may return nothing.
            let descriptor = open("/proc/\(pid)/\(name)", O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw TestSupportError.systemCall("open /proc/\(pid)/\(name)", errno: errno) }
            defer { close(descriptor) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { throw TestSupportError.systemCall("read /proc/\(pid)/\(name)", errno: errno) }
                if count == 0 { return bytes }
                bytes += buffer[0..<count]
            }
        }

        @Test func thePrivateKeyIsNeverInArgumentsEnvironmentLogsOrBeacons() async throws {
            let harness = try TransferHarness()
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let listener = try reactor.openUDP(
                bindingTo: .ipv4(.any, port: Discovery.port), reuseAddress: true, reusePort: true)
            defer { listener.close() }
            let group = try #require(IPv4Address(Discovery.multicastGroup))
            try listener.joinMulticast(group: group, interface: .loopback)
            let beacons = Task {
                var packets: [[UInt8]] = []
                while let (bytes, _) = try? await listener.receive(maxBytes: 2048) {
                    packets.append(bytes)
                    if packets.count >= 10_000 { break }
                }
                return packets
            }
            let file = try harness.files.random("secret.bin", size: 300_000)
            let (receiver, port) = try harness.receiver("inbox", once: true, ["-v", "-v"])
            let sender = try harness.sender([file.path], to: [port], ["-v", "-v"])
            // The sender has run its own code once it logs (/proc shows no arguments while a process is still
            // inside execve, nor once it has ended).
            _ = try sender.nextErrorLine()
            let running = try [receiver, sender].map {
                (cmdline: try Self.procFile($0.pid, "cmdline"), environ: try Self.procFile($0.pid, "environ"))
            }
            // The haystacks are real: each process's arguments name the binary and its command.
            for proc in running {
                #expect(Self.contains(proc.cmdline, Array("ferry".utf8)), "no arguments read")
                #expect(!proc.environ.isEmpty, "no environment read")
            }
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            listener.close()
            let packets = await beacons.value
            // The capture works: the receiver's own beacons (they carry its display name) were seen.
            #expect(packets.contains { Self.contains($0, Array("inbox".utf8)) }, "no beacon of the receiver seen")

            var haystacks: [(String, [UInt8])] = []
            for (process, name) in [(receiver, "receiver"), (sender, "sender")] {
                haystacks.append(("\(name) stdout", Array(process.allStdoutLines.joined(separator: "\n").utf8)))
                haystacks.append(("\(name) stderr", Array(process.allStderrLines.joined(separator: "\n").utf8)))
            }
            for (index, proc) in running.enumerated() {
                haystacks.append(("process \(index) arguments", proc.cmdline))
                haystacks.append(("process \(index) environment", proc.environ))
            }
            haystacks.append(("beacons", packets.flatMap { $0 }))
            #expect(haystacks.contains { $0.0 == "receiver stderr" && !$0.1.isEmpty }, "-v -v logged nothing")
            for install in ["inbox", "outbox"] {
                let key = try Self.keyMaterial(pemAt: harness.chat.config.path + "/\(install)/ferry/identity.pem")
                let hex = Array(key.seed.map { String(format: "%02x", $0) }.joined().utf8)
                for (what, bytes) in haystacks {
                    #expect(!Self.contains(bytes, key.seed), "\(install)'s key seed in \(what)")
                    #expect(!Self.contains(bytes, hex), "\(install)'s key seed in hex in \(what)")
                    for line in key.base64Lines where line.count >= 16 {
                        #expect(!Self.contains(bytes, Array(line.utf8)), "\(install)'s PEM key in \(what)")
                    }
                }
            }
        }
    }
}
