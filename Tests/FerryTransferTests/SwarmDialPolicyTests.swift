import FerrySystem
import Testing

@testable import FerryTransfer

/// Which member addresses a swarm member dials, and how often (issue 27 point 8, PROTOCOL.md 11.11 rule 4): only
/// addresses on its own network, loopback only when its link to the sender is on loopback, at most three dials per
/// member with a growing pause.
@Suite struct SwarmDialPolicyTests {
    static func v4(_ text: String) -> SocketAddress { try! SocketAddress.resolve(text) }

    /// This member is 192.168.1.20/24 and 10.1.0.5/16; its link to the sender is at `sender`.
    static func policy(sender: String?) -> SwarmDialPolicy {
        SwarmDialPolicy(
            sender: sender.map(v4),
            networks: [
                .init(address: IPv4Address(192, 168, 1, 20), prefixLength: 24),
                .init(address: IPv4Address(10, 1, 0, 5), prefixLength: 16),
            ])
    }

    @Test(arguments: [
        // The sender on the LAN: members on either of this member's networks, nothing else.
        ("192.168.1.7:9000", "192.168.1.30:41971", true),
        ("192.168.1.7:9000", "10.1.200.3:41971", true),
        ("192.168.1.7:9000", "192.168.2.30:41971", false),  // another network
        ("192.168.1.7:9000", "8.8.8.8:53", false),  // the internet
        ("192.168.1.7:9000", "127.0.0.1:41971", false),  // loopback: this member is not on it
        ("192.168.1.7:9000", "127.0.0.53:53", false),
        ("192.168.1.7:9000", "169.254.1.1:80", false),  // link-local, not a network of this member
        ("192.168.1.7:9000", "192.168.1.0:41971", false),  // the network's own address
        ("192.168.1.7:9000", "192.168.1.255:41971", false),  // its broadcast address
        ("192.168.1.7:9000", "255.255.255.255:41971", false),
        ("192.168.1.7:9000", "224.0.0.251:5353", false),  // multicast
        ("192.168.1.7:9000", "0.0.0.0:41971", false),
        ("192.168.1.7:9000", "192.168.1.30:0", false),  // no port
        ("192.168.1.7:9000", "[fe80::1%2]:41971", false),  // another family than the sender's
        // The sender on loopback: every member is on this host, only loopback addresses.
        ("127.0.0.1:9000", "127.0.0.1:41971", true),
        ("127.0.0.1:9000", "127.0.0.2:41971", true),
        ("127.0.0.1:9000", "192.168.1.30:41971", false),
        // IPv6: the sender's /64, or link-local on the sender's interface; ::1 only with the sender on it.
        ("[2001:db8:1:2::7]:9000", "[2001:db8:1:2::30]:41971", true),
        ("[2001:db8:1:2::7]:9000", "[2001:db8:1:3::30]:41971", false),
        ("[2001:db8:1:2::7]:9000", "[::1]:41971", false),
        ("[2001:db8:1:2::7]:9000", "[fe80::30%2]:41971", false),
        ("[2001:db8:1:2::7]:9000", "[ff02::1%2]:41971", false),
        ("[2001:db8:1:2::7]:9000", "192.168.1.30:41971", false),
        ("[fe80::7%2]:9000", "[fe80::30%2]:41971", true),
        ("[fe80::7%2]:9000", "[fe80::30%3]:41971", false),  // another interface
        ("[fe80::7%2]:9000", "[2001:db8:1:2::30]:41971", false),
        ("[::1]:9000", "[::1]:41971", true),
        ("[::1]:9000", "[fe80::30%2]:41971", false),
    ])
    func anAddressIsDialledOnlyOnThisMembersOwnNetwork(sender: String, member: String, dialled: Bool) {
        #expect(
            Self.policy(sender: sender).allows(Self.v4(member)) == dialled, "\(member) with the sender at \(sender)")
    }

    @Test func withTheSendersAddressUnknownNothingIsDialled() {
        #expect(!Self.policy(sender: nil).allows(Self.v4("192.168.1.30:41971")))
        #expect(!Self.policy(sender: nil).allows(Self.v4("127.0.0.1:41971")))
    }

    /// The networks come from `getifaddrs(3)` with their netmasks: loopback's is 127.0.0.0/8.
    @Test func thisHostsInterfacesComeWithTheirPrefixLengths() throws {
        let loopback = try NetworkInterface.all().first { $0.ipv4 == .loopback }
        #expect(loopback?.ipv4PrefixLength == 8, "\(String(describing: loopback))")
    }

    @Test func aMemberIsDialledThreeTimesAtMostWithAGrowingPause() {
        let start = ContinuousClock.now
        func may(_ attempts: Int, _ seconds: Int) -> Bool {
            SwarmDialPolicy.mayDial(
                attempts: attempts, last: attempts == 0 ? nil : start, now: start + .seconds(seconds))
        }
        #expect(may(0, 0))
        #expect(!may(1, 0) && !may(1, 29) && may(1, 30))
        #expect(!may(2, 59) && may(2, 60))
        #expect(!may(3, 3600) && !may(4, 36_000))
    }
}
