import FerrySystem
import Testing

@testable import FerryCLI

/// Where `ferry receive` serves LocalSend (issue 29) as `--interface` says: off without a word on loopback only
/// (no phone reaches it, and tests on one host must not fight over port 53317), on loopback when `--localsend-port`
/// is given (tests by hand), on the chosen interfaces' addresses otherwise, on all of them when none is chosen.
@Suite struct LocalSendPlacementTests {
    static let loopback = NetworkInterface(
        name: "lo", index: 1, ipv4: IPv4Address("127.0.0.1"), isUp: true, isLoopback: true, supportsMulticast: false)
    static let lan = NetworkInterface(
        name: "eth0", index: 2, ipv4: IPv4Address("192.168.1.20"), isUp: true, isLoopback: false,
        supportsMulticast: true)
    static let wifi = NetworkInterface(
        name: "wlan0", index: 3, ipv4: IPv4Address("10.0.0.7"), isUp: true, isLoopback: false, supportsMulticast: true)
    static let all = [loopback, lan, wifi]
    typealias Placement = ReceiveCommand.LocalSendPlacement

    @Test func onlyLoopbackChosenLeavesLocalSendOff() {
        #expect(Placement.of(chosen: ["lo"], portGiven: false, interfaces: Self.all) == nil)
    }

    @Test func anExplicitPortOnLoopbackServesOnLoopbacksAddressWithoutDiscovery() throws {
        let placement = try #require(Placement.of(chosen: ["lo"], portGiven: true, interfaces: Self.all))
        #expect(placement.addresses == [try #require(IPv4Address("127.0.0.1"))])
        #expect(!placement.discovery)
    }

    @Test func chosenInterfacesAreServedOnTheirAddressesWithDiscovery() throws {
        let placement = try #require(Placement.of(chosen: ["eth0", "lo"], portGiven: false, interfaces: Self.all))
        #expect(
            placement.addresses == [try #require(IPv4Address("127.0.0.1")), try #require(IPv4Address("192.168.1.20"))])
        #expect(placement.discovery)
    }

    @Test func noInterfaceChosenServesAllAddressesWithDiscovery() {
        #expect(
            Placement.of(chosen: [], portGiven: false, interfaces: Self.all)
                == Placement(addresses: [], discovery: true))
    }

    @Test func aChosenInterfaceWithoutIPv4LeavesLocalSendOff() {
        let bare = NetworkInterface(
            name: "eth1", index: 4, ipv4: nil, isUp: true, isLoopback: false, supportsMulticast: true)
        #expect(Placement.of(chosen: ["eth1"], portGiven: false, interfaces: Self.all + [bare]) == nil)
    }
}
