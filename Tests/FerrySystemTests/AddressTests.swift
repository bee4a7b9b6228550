@testable import FerrySystem
import Testing

@Suite("Addresses")
struct AddressTests {
    @Test func ipv4ParsesAndPrints() throws {
        let address = try #require(IPv4Address("192.168.1.20"))
        #expect(address.rawValue == 0xC0A8_0114)
        #expect(address.description == "192.168.1.20")
        #expect(address == IPv4Address(192, 168, 1, 20))
        #expect(IPv4Address.loopback.description == "127.0.0.1")
        #expect(IPv4Address.any.description == "0.0.0.0")
        #expect(IPv4Address("239.255.70.89")?.isMulticast == true)
        #expect(IPv4Address.loopback.isLoopback)
    }

    @Test(arguments: ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "a.b.c.d", " 1.2.3.4", "1.2.3.4 ", "::1", "1.2.3.-4"])
    func ipv4RejectsBadInput(_ text: String) {
        #expect(IPv4Address(text) == nil)
    }

    @Test func ipv6ParsesAndPrints() throws {
        #expect(IPv6Address("::1") == .loopback)
        #expect(IPv6Address("::") == .any)
        let address = try #require(IPv6Address("FE80:0:0:0:0:0:0:1"))
        #expect(address.description == "fe80::1")
        #expect(address.bytes == [0xFE, 0x80] + [UInt8](repeating: 0, count: 13) + [1])
        #expect(IPv6Address(bytes: address.bytes) == address)
        #expect(IPv6Address(bytes: [1, 2, 3]) == nil)
    }

    @Test(arguments: ["", "1:2:3:4:5:6:7:8:9", "::g", "1.2.3.4", "fe80::1%eth0", ":::"])
    func ipv6RejectsBadInput(_ text: String) {
        #expect(IPv6Address(text) == nil)
    }

    @Test func socketAddressPrints() throws {
        let v4 = SocketAddress.ipv4(IPv4Address(1, 2, 3, 4), port: 5)
        #expect(v4.description == "1.2.3.4:5")
        #expect(v4.hostDescription == "1.2.3.4")
        #expect(v4.port == 5)
        #expect(v4.withPort(80) == .ipv4(IPv4Address(1, 2, 3, 4), port: 80))
        let v6 = SocketAddress.ipv6(.loopback, port: 5, scopeID: 0)
        #expect(v6.description == "[::1]:5")
        #expect(v6.hostDescription == "::1")
        #expect(v6.withPort(6).port == 6)
        let scoped = SocketAddress.ipv6(try #require(IPv6Address("fe80::1")), port: 7, scopeID: 2)
        #expect(scoped.description == "[fe80::1%2]:7")
    }

    @Test func socketAddressRoundTripsThroughSockaddr() {
        let addresses: [SocketAddress] = [
            .ipv4(IPv4Address(10, 0, 0, 1), port: 65535),
            .ipv6(IPv6Address(high: 0xFE80_0000_0000_0000, low: 0x1234), port: 1, scopeID: 3),
        ]
        for address in addresses {
            let copy = address.withSockAddr { pointer, length in
                SocketAddress(UnsafeRawPointer(pointer), length: length)
            }
            #expect(copy == address)
        }
    }

    @Test func resolveParsesLiteralsAndLocalhost() throws {
        #expect(try SocketAddress.resolve("1.2.3.4:5") == .ipv4(IPv4Address(1, 2, 3, 4), port: 5))
        #expect(try SocketAddress.resolve("[::1]:5") == .ipv6(.loopback, port: 5, scopeID: 0))
        #expect(try SocketAddress.resolve("1.2.3.4", defaultPort: 9) == .ipv4(IPv4Address(1, 2, 3, 4), port: 9))
        #expect(try SocketAddress.resolve("[::1]", defaultPort: 9) == .ipv6(.loopback, port: 9, scopeID: 0))
        #expect(try SocketAddress.resolve("::1", defaultPort: 9) == .ipv6(.loopback, port: 9, scopeID: 0))
        #expect(try SocketAddress.resolve("0.0.0.0:0") == .ipv4(.any, port: 0))
        // "localhost" is answered from /etc/hosts: no packet leaves the machine.
        #expect(try SocketAddress.resolve("localhost:80") == .ipv4(.loopback, port: 80))
    }

    @Test(arguments: ["1.2.3.4", "", ":5", "[::1", "[::1]x", "[::1]5", "host name:5", "[]:5"])
    func resolveRejectsBadSyntax(_ text: String) {
        #expect {
            try SocketAddress.resolve(text)
        } throws: { error in
            guard case .invalidSyntax(let input, let expected) = error as? AddressError else { return false }
            return input == text && expected == "HOST:PORT"
        }
    }

    @Test(arguments: ["1.2.3.4:", "1.2.3.4:65536", "1.2.3.4:-1", "1.2.3.4:+5", "1.2.3.4:http", "[::1]:"])
    func resolveRejectsBadPorts(_ text: String) {
        #expect(throws: AddressError.invalidPort(input: text)) {
            try SocketAddress.resolve(text)
        }
    }

    @Test func addressErrorsExplainThemselves() {
        let error = AddressError.invalidSyntax(input: "nowhere", expected: "HOST:PORT")
        #expect(error.description == "invalid address \"nowhere\": expected HOST:PORT")
    }

    @Test func errorsNameTheCall() {
        #expect(Errno.connectionRefused.description == "Connection refused")
        #expect(SystemError(call: "bind()", errno: .addressInUse).description == "bind(): Address already in use")
        #expect(ReactorError.closed != ReactorError.timedOut)
    }

    @Test func interfacesIncludeLoopback() throws {
        let interfaces = try NetworkInterface.all()
        let loopback = try #require(interfaces.first { $0.ipv4 == .loopback })
        #expect(loopback.isLoopback)
        #expect(loopback.isUp)
        #expect(loopback.index > 0)
        #expect(!loopback.name.isEmpty)
    }
}
