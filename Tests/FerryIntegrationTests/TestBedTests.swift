import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// Test-bed tests share the machine's namespace list and root links, so they run one at a time.
    @Suite("TestBed", .serialized)
    struct TestBedTests {
        init() throws {
            TestBed.removeStale()
            guard try TestBed.requireAvailability() else {
                try Test.cancel("network namespaces unavailable: \(TestBed.isAvailable.reason)")
            }
        }

        @Test func hostsReachEachOtherAndRootNamespaceIsUntouched() async throws {
            let rootLinksBefore = try rootLinkNames()
            try await TestBed.with(hosts: 3, name: "reach") { bed in
                #expect(Set(bed.hosts.map(\.address)).count == 3)
                for host in bed.hosts {
                    let addresses = try bed.run(host: host, ["ip", "-4", "-o", "addr", "show", "dev", "eth0"])
                    #expect(addresses.stdout.contains("\(host.address)/24"))
                }
                if ExecutableSearch.path(of: "ping") != nil {
                    for source in bed.hosts {
                        for target in bed.hosts where target != source {
                            try bed.run(host: source, ["ping", "-c1", "-W5", target.address]).requireSuccess()
                        }
                    }
                }
                try UDPProbe.exchangeBetweenAllPairs(of: bed)
                try UDPProbe.multicast(from: bed.hosts[0], to: Array(bed.hosts.dropFirst()), in: bed)
            }
            #expect(try rootLinkNames() == rootLinksBefore)
        }

        @Test func namespacesAreGoneWhenTheBodyThrows() async throws {
            struct Planned: Error {}
            var created: [String] = []
            await #expect(throws: Planned.self) {
                try await TestBed.with(hosts: 2, name: "throws") { bed in
                    created = bed.namespaces
                    #expect(Set(try namespaceNames()).isSuperset(of: created))
                    throw Planned()
                }
            }
            #expect(created.count == 3)
            #expect(Set(try namespaceNames()).isDisjoint(with: created))
        }

        @Test func destroyKillsProcessesAndIsIdempotent() throws {
            let bed = try TestBed.create(hosts: 1, name: "kill")
            let cat = try bed.start(on: bed.hosts[0], executable: "cat")
            try cat.send(line: "inside")
            #expect(try cat.nextLine() == "inside")
            bed.destroy()
            #expect(try cat.waitForExit() == 128 + SIGKILL)
            bed.destroy()
            #expect(Set(try namespaceNames()).isDisjoint(with: bed.namespaces))
        }

        @Test func rateLimitInstallsTokenBucket() async throws {
            try await TestBed.with(hosts: 2, name: "tbf") { bed in
                let host = bed.hosts[1]
                try bed.limitRate(host: host, mbit: 8, burstKiB: 32)
                let outgoing = try bed.run(host: host, ["tc", "qdisc", "show", "dev", "eth0"]).requireSuccess()
                #expect(outgoing.stdout.contains("tbf"))
                #expect(outgoing.stdout.contains("8Mbit"))
                try bed.limitRate(host: host, mbit: 4, burstKiB: 16, direction: .incoming)
                let incoming = try FerryProcess.run(
                    "tc", ["qdisc", "show", "dev", "p1"], namespace: bed.switchNamespace)
                #expect(incoming.stdout.contains("tbf"))
                try bed.removeRateLimit(host: host)
                let removed = try bed.run(host: host, ["tc", "qdisc", "show", "dev", "eth0"]).requireSuccess()
                #expect(!removed.stdout.contains("tbf"))
            }
        }

        /// The swarm bed of issue 12 in small: every link shaped both ways (read back from `tc`, not timed), and the
        /// veth counters of each host move with what it sends and receives, and only with that.
        @Test func everyLinkIsLimitedBothWaysAndItsCountersMove() async throws {
            try await TestBed.with(hosts: 3, name: "links") { bed in
                try bed.limitEveryLink(mbit: 100, burstKiB: 64)
                for host in bed.hosts {
                    let (outgoing, incoming) = try bed.queueingDisciplines(of: host)
                    #expect(outgoing.contains("tbf") && outgoing.contains("rate 100Mbit"), "\(host) eth0: \(outgoing)")
                    #expect(
                        incoming.contains("tbf") && incoming.contains("rate 100Mbit"),
                        "\(host) p\(host.index): \(incoming)")
                }
                let (sender, receiver, bystander) = (bed.hosts[0], bed.hosts[1], bed.hosts[2])
                let server = try bed.perform(in: receiver) {
                    try UDPProbe.socket(boundTo: receiver.address, port: 47_003)
                }
                defer { _ = close(server) }
                let client = try bed.perform(in: sender) { try UDPProbe.socket(boundTo: sender.address, port: 0) }
                defer { _ = close(client) }
                // One datagram there first: it waits for ARP, later ones would be dropped while it is unresolved.
                try UDPProbe.send("first", from: client, to: receiver.address, port: 47_003)
                #expect(try UDPProbe.receive(on: server).text == "first")
                let before = try bed.linkCounters()
                let senderEth0Before = try bed.hostLinkCounters(sender)
                let payload = String(repeating: "x", count: 1200)
                let count = 200
                // Each datagram read back before the next is sent: all have crossed both ports when the loop ends.
                for _ in 0..<count {
                    try UDPProbe.send(payload, from: client, to: receiver.address, port: 47_003)
                    #expect(try UDPProbe.receive(on: server).text.utf8.count == payload.utf8.count)
                }
                let bytes = count * payload.utf8.count
                let after = try bed.linkCounters()
                let moved = try #require(after[sender]).sentBytes - (try #require(before[sender])).sentBytes
                let arrived =
                    try #require(after[receiver]).receivedBytes - (try #require(before[receiver])).receivedBytes
                let elsewhere =
                    try #require(after[bystander]).receivedBytes - (try #require(before[bystander])).receivedBytes
                #expect(moved >= bytes, "the sender's port counted \(moved) bytes out of \(bytes) sent")
                #expect(arrived >= bytes, "the receiver's port counted \(arrived) bytes in of \(bytes) sent")
                #expect(elsewhere < bytes / 10, "the bystander counted \(elsewhere) bytes in")
                let senderEth0 = try bed.hostLinkCounters(sender) - senderEth0Before
                #expect(senderEth0.sentBytes >= bytes, "the sender's eth0 counted \(senderEth0.sentBytes) bytes out")
            }
        }

        @Test func removeStaleDeletesNamespacesOfDeadRuns() throws {
            let exited = try FerryProcess(executable: "/bin/true")
            _ = try exited.waitForExit()
            let stale = "ferry-\(exited.pid)-1-stale-h0"
            try FerryProcess.run("ip", ["netns", "add", stale]).requireSuccess()
            defer { _ = try? FerryProcess.run("ip", ["netns", "delete", stale]) }
            TestBed.removeStale()
            #expect(!(try namespaceNames()).contains(stale))
        }
    }
}

private func namespaceNames() throws -> [String] {
    let result = try FerryProcess.run("ip", ["netns", "list"]).requireSuccess()
    return result.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
}

private func rootLinkNames() throws -> [String] {
    let result = try FerryProcess.run("ip", ["-o", "link", "show"]).requireSuccess()
    return result.stdout.split(separator: "\n").compactMap { line in
        line.split(separator: ":", maxSplits: 2).dropFirst().first.map { $0.trimmingCharacters(in: .whitespaces) }
    }.sorted()
}

/// UDP unicast and multicast between hosts, with sockets opened inside the hosts' namespaces.
///
/// Needs no tool on the machine (`ping` may be missing on a fresh Debian).
private enum UDPProbe {
    struct ProbeError: Error, CustomStringConvertible {
        var description: String
    }

    static let port: UInt16 = 47_001
    static let multicastPort: UInt16 = 47_002
    static let group = "239.255.77.1"

    static func exchangeBetweenAllPairs(of bed: TestBed) throws {
        var servers: [Int32] = []
        defer { servers.forEach { _ = close($0) } }
        for host in bed.hosts {
            servers.append(try bed.perform(in: host) { try socket(boundTo: host.address, port: port) })
        }
        for source in bed.hosts {
            for target in bed.hosts where target != source {
                let client = try bed.perform(in: source) { try socket(boundTo: source.address, port: 0) }
                defer { _ = close(client) }
                let message = "ping \(source.index)->\(target.index)"
                try send(message, from: client, to: target.address, port: port)
                let request = try receive(on: servers[target.index])
                #expect(request.text == message)
                #expect(request.address == source.address)
                try send("pong", from: servers[target.index], to: request.address, port: request.port)
                let reply = try receive(on: client)
                #expect(reply.text == "pong")
                #expect(reply.address == target.address)
            }
        }
    }

    /// Joins `group` on every receiver's eth0, sends once from `sender` (through its 224.0.0.0/4 route).
    static func multicast(from sender: TestHost, to receivers: [TestHost], in bed: TestBed) throws {
        var sockets: [Int32] = []
        defer { sockets.forEach { _ = close($0) } }
        for receiver in receivers {
            sockets.append(
                try bed.perform(in: receiver) {
                    let fd = try socket(boundTo: "0.0.0.0", port: multicastPort)
                    var request = ip_mreq()
                    inet_pton(AF_INET, group, &request.imr_multiaddr)
                    inet_pton(AF_INET, receiver.address, &request.imr_interface)
                    guard
                        setsockopt(
                            fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request,
                            socklen_t(MemoryLayout<ip_mreq>.size)) == 0
                    else {
                        _ = close(fd)
                        throw ProbeError(description: "IP_ADD_MEMBERSHIP failed, errno \(errno)")
                    }
                    return fd
                })
        }
        let client = try bed.perform(in: sender) { try socket(boundTo: sender.address, port: 0) }
        defer { _ = close(client) }
        try send("hello group", from: client, to: group, port: multicastPort)
        for fd in sockets {
            let datagram = try receive(on: fd)
            #expect(datagram.text == "hello group")
            #expect(datagram.address == sender.address)
        }
    }

    static func socket(boundTo address: String, port: UInt16) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ProbeError(description: "socket failed, errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = makeAddress(address, port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let saved = errno
            _ = close(fd)
            throw ProbeError(description: "bind \(address):\(port) failed, errno \(saved)")
        }
        return fd
    }

    static func send(_ text: String, from fd: Int32, to address: String, port: UInt16) throws {
        var remote = makeAddress(address, port)
        let bytes = Array(text.utf8)
        let sent = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == bytes.count else { throw ProbeError(description: "sendto \(address) failed, errno \(errno)") }
    }

    static func receive(on fd: Int32) throws -> (text: String, address: String, port: UInt16) {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var remote = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = withUnsafeMutablePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
        }
        guard count >= 0 else { throw ProbeError(description: "no datagram within 10 s (errno \(errno))") }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &remote.sin_addr, &text, socklen_t(text.count))
        let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (String(decoding: buffer[..<count], as: UTF8.self), address, UInt16(bigEndian: remote.sin_port))
    }

    static func makeAddress(_ address: String, _ port: UInt16) -> sockaddr_in {
        var result = sockaddr_in()
        result.sin_family = sa_family_t(AF_INET)
        result.sin_port = port.bigEndian
        inet_pton(AF_INET, address, &result.sin_addr)
        return result
    }
}
