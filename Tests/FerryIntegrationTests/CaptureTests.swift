import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

extension IntegrationTests {
    /// What someone capturing on the path sees of a whole transfer (issue 4, "Identity and links"): `tcpdump` on
    /// `lo` records a `ferry send --compress none`, and the capture holds neither the file's name, nor its content,
    /// nor its size, nor the sender's hello; only the 8-byte preface is in the clear. Controls show the search finds
    /// what is there: the preface in the same capture, and the content of the same file sent over plain TCP.
    @Suite(.serialized) struct CaptureTests {
        /// `tcpdump`'s path; where it cannot run, the test is skipped visibly, or fails under FERRY_REQUIRE_NETNS=1.
        static func tcpdump() throws -> String {
            let path = ExecutableSearch.path(of: "tcpdump")
            let reason =
                path == nil
                ? "tcpdump is not installed (Debian package tcpdump)" : "capturing needs root (uid is \(getuid()))"
            guard let path, getuid() == 0 else {
                _ = try Requirement.check("a packet capture", available: false, reason: reason)  // throws in CI
                try Test.cancel("packet capture unavailable: \(reason)")
            }
            return path
        }

        @Test func aWholeTransferOnLoopbackShowsNoNameContentSizeOrHello() async throws {
            let tcpdump = try Self.tcpdump()
            let harness = try TransferHarness()
            let capture = try TemporaryDirectory(prefix: "ferry-capture")
            defer { capture.remove() }

            // A name, a 64-byte content pattern and an exact size that occur nowhere else.
            let tag = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let name = "canary-\(tag).bin"
            let canary = (0..<64).map { _ in UInt8.random(in: 0...255) }
            let size = (2 << 20) + 2 * Int.random(in: 1_000...60_000) + 1
            // (Not `TestFiles.write`: it traps on more than one 1 MiB piece.)
            let file = harness.source.url.appendingPathComponent(name)
            try Data((0..<size).map { canary[$0 % canary.count] }).write(to: file)
            let senderName = "outbox-\(tag)"
            let senderDevice = try await harness.chat.deviceID(of: "outbox")

            let (receiver, port) = try harness.receiver()
            let plain = try LoopbackSocket.listen()
            defer { plain.close() }
            let pcap = capture.path + "/transfer.pcap"
            let dump = try harness.chat.registry.start(
                executable: tcpdump,
                arguments: [
                    "-i", "lo", "-n", "-s", "0", "-B", "65536", "-U", "-Z", "root", "-w", pcap,
                    "tcp port \(port) or tcp port \(plain.port) or udp",
                ])
            _ = try await onOwnThread {
                try dump.waitForErrorLine(timeout: .seconds(60)) { $0.contains("listening on") }
            }

            let sent = try await harness.sender([file.path], to: [port], ["--compress", "none", "--name", senderName])
                .finish()
            #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
            let received = try await receiver.finish()
            #expect(received.status == 0)
            let started = received.stdout.compactMap(TransferHarness.json).first { $0["event"] as? String == "started" }
            let peerIDText = try #require(started?["peerID"] as? String, "\(received.stdout)")
            let senderPeerID = try #require(PeerID(hex: peerIDText))
            // The control: the same bytes over plain TCP, in the same capture.
            try await Self.sendPlain(file: file, to: plain)

            dump.signal(SIGINT)
            let stopped = try await dump.finish(timeout: .seconds(60))
            #expect(stopped.status == 0, "tcpdump: \(stopped.stderr)")
            let packets = try PacketCapture(contentsOf: pcap)
            let ferry = packets.tcpStreams.filter { $0.key.contains(".\(port) ") || $0.key.hasSuffix(".\(port)") }
            let clear = packets.tcpStreams.filter {
                $0.key.contains(".\(plain.port) ") || $0.key.hasSuffix(".\(plain.port)")
            }
            let summary =
                "\(packets.packets) packets, \(packets.skipped) skipped; tcpdump: \(stopped.stderr) \(stopped.stdout)"

            #expect(ferry.values.reduce(0) { $0 + $1.count } >= size, "the capture holds the transfer: \(summary)")
            let link = PacketCapture(streams: ferry, udp: packets.udpPayloads)
            let secrets: [(String, [UInt8])] = [
                ("the file name", Array(name.utf8)), ("the content", canary),
                ("the 8-byte size", withUnsafeBytes(of: UInt64(size).bigEndian, Array.init)),
            ]
            for (what, bytes) in secrets {
                #expect(link.find(bytes) == (false, false), "\(what) is not in the capture")
            }
            // The hello travels inside TLS; the same fields in the clear are only in discovery beacons (UDP).
            let hello: [(String, [UInt8])] = [
                ("the sender's name", Array(senderName.utf8)),
                ("the sender's device ID", try #require(Self.bytes(hex: senderDevice))),
                ("the sender's peer ID", withUnsafeBytes(of: senderPeerID.rawValue.bigEndian, Array.init)),
            ]
            for (what, bytes) in hello {
                #expect(!link.find(bytes).tcp, "\(what) is not on the link")
            }

            // Controls: the search finds what is in the clear.
            #expect(link.find(Preface.encode()).tcp, "the preface is in the clear: \(summary)")
            #expect(PacketCapture(streams: clear, udp: []).find(canary).tcp, "plain TCP shows the content: \(summary)")
            #expect(PacketCapture(streams: clear, udp: []).find(Array(name.utf8)) == (false, false))
        }

        /// Writes the file's bytes over a plain TCP connection to `listener` and reads them on the other end.
        static func sendPlain(file: URL, to listener: LoopbackSocket) async throws {
            let bytes = [UInt8](try Data(contentsOf: file))
            let port = listener.port
            async let reader: Int = onOwnThread {
                let accepted = try listener.accept()
                defer { accepted.close() }
                return try accepted.readToEnd().count
            }
            try await onOwnThread {
                let socket = try LoopbackSocket.connect(port: port)
                defer { socket.close() }
                try socket.write(bytes)
            }
            #expect(try await reader == bytes.count)
        }

        static func bytes(hex: String) -> [UInt8]? {
            let digits = Array(hex.utf8)
            guard digits.count.isMultiple(of: 2) else { return nil }
            return stride(from: 0, to: digits.count, by: 2).compactMap { index in
                UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16)
            }
        }
    }
}

extension PacketCapture {
    /// A capture made of some of another's streams.
    init(streams: [String: [UInt8]], udp: [[UInt8]]) {
        tcpStreams = streams
        udpPayloads = udp
    }
}
