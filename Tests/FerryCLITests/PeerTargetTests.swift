import FerrySystem
import FerryWire
import Testing

@testable import FerryCLI

/// `--to` values: how they parse, and which peer they pick.
@Suite struct PeerTargetTests {
    static func device(_ bytes: [UInt8]) -> DeviceID {
        DeviceID(bytes: bytes + [UInt8](repeating: 0, count: DeviceID.length - bytes.count))!
    }

    static let alice = PeerCandidate(
        peerID: PeerID(rawValue: 0x0123_4567_89ab_cdef), deviceID: device([0x10, 0x20, 0x30]), displayName: "alice",
        address: .ipv4(IPv4Address(192, 168, 1, 20), port: 41971))
    static let aliceTwo = PeerCandidate(
        peerID: PeerID(rawValue: 0xfedc_ba98_7654_3210), deviceID: device([0xA0, 0xB0]), displayName: "alice")
    static let bob = PeerCandidate(
        peerID: PeerID(rawValue: 0x0123_0000_0000_0001), deviceID: device([0x11, 0x22]), displayName: "Bob")

    @Test func namesStayNames() throws {
        #expect(try PeerTarget.parse("alice") == .name("alice"))
        #expect(try PeerTarget.parse("Zoë's laptop") == .name("Zoë's laptop"))
        #expect(try PeerTarget.parse("ABCD-EFGH") == .name("ABCD-EFGH"))
        #expect(try PeerTarget.parse("0123456789abcdef") == .name("0123456789abcdef"))
        // Not HOST:PORT (no port, or a host that is neither an IP nor a host name): a name.
        #expect(try PeerTarget.parse("192.168.1.20") == .name("192.168.1.20"))
        #expect(try PeerTarget.parse("Zoë:1") == .name("Zoë:1"))
    }

    @Test func addressesParseWithoutLookingUpNames() throws {
        #expect(
            try PeerTarget.parse("127.0.0.1:5000") == .address("127.0.0.1:5000", .ipv4(.loopback, port: 5000)))
        let v6 = try PeerTarget.parse("[::1]:41971")
        guard case .address(let text, let address) = v6 else {
            Issue.record("not an address: \(v6)")
            return
        }
        #expect(text == "[::1]:41971")
        #expect(address.port == 41971)
        #expect(address.hostDescription == "::1")
    }

    @Test func anAddressWithAnInvalidPortIsAUsageError() {
        #expect(
            throws: CLIError.usage(
                "--to: '10.0.0.1:0' has no valid port; give a port from 1 to 65535 (e.g. 10.0.0.1:41971)")
        ) { try PeerTarget.parse("10.0.0.1:0") }
        #expect(throws: CLIError.self) { try PeerTarget.parse("127.0.0.1:99999") }
        #expect(
            throws: CLIError.usage(
                "--to: '[::1]:70000' has no valid port; give a port from 1 to 65535 (e.g. [::1]:41971)")
        ) { try PeerTarget.parse("[::1]:70000") }
    }

    @Test func hostNamesAreRefused() {
        #expect(throws: CLIError.self) { try PeerTarget.parse("laptop.local:41971") }
        #expect(throws: CLIError.self) { try PeerTarget.parse("localhost:1") }
        #expect(throws: CLIError.usage("--to: the peer name must not be empty")) { try PeerTarget.parse("") }
    }

    @Test func exactNameWins() {
        let candidates = [Self.alice, Self.bob]
        #expect(PeerTarget.name("alice").match(in: candidates) == .one(Self.alice))
        #expect(PeerTarget.name("Bob").match(in: candidates) == .one(Self.bob))
        #expect(PeerTarget.name("carol").match(in: candidates) == TargetMatch.none)
    }

    @Test func nameIgnoringCaseComesSecond() {
        #expect(PeerTarget.name("bob").match(in: [Self.alice, Self.bob]) == .one(Self.bob))
        let upper = PeerCandidate(peerID: PeerID(rawValue: 9), deviceID: Self.device([1]), displayName: "BOB")
        // "Bob" matches one peer exactly: the one spelled differently does not make it ambiguous.
        #expect(PeerTarget.name("Bob").match(in: [Self.bob, upper]) == .one(Self.bob))
        #expect(PeerTarget.name("bob").match(in: [Self.bob, upper]) == .ambiguous([Self.bob, upper]))
    }

    @Test func deviceIDPrefix() {
        let candidates = [Self.alice, Self.aliceTwo, Self.bob]
        let base32 = String(Self.aliceTwo.deviceID.base32.prefix(6))
        #expect(PeerTarget.name(base32).match(in: candidates) == .one(Self.aliceTwo))
        #expect(PeerTarget.name(base32.lowercased()).match(in: candidates) == .one(Self.aliceTwo))
        let grouped = String(Self.aliceTwo.deviceID.description.prefix(9))  // "XXXX-XXXX"
        #expect(PeerTarget.name(grouped).match(in: candidates) == .one(Self.aliceTwo))
        #expect(PeerTarget.name(Self.alice.deviceID.hex).match(in: candidates) == .one(Self.alice))
        #expect(PeerTarget.name(Self.alice.deviceID.description).match(in: candidates) == .one(Self.alice))
    }

    @Test func peerIDPrefix() {
        let candidates = [Self.alice, Self.aliceTwo, Self.bob]
        #expect(PeerTarget.name("fedc").match(in: candidates) == .one(Self.aliceTwo))
        #expect(PeerTarget.name("FEDCBA98").match(in: candidates) == .one(Self.aliceTwo))
        // Both alice and bob have peer IDs starting with 0123.
        #expect(PeerTarget.name("0123").match(in: candidates) == .ambiguous([Self.alice, Self.bob]))
        #expect(PeerTarget.name("01234").match(in: candidates) == .one(Self.alice))
    }

    @Test func shortPrefixesPickNoOne() {
        #expect(PeerTarget.name("fed").match(in: [Self.aliceTwo]) == TargetMatch.none)
        #expect(PeerTarget.name(String(Self.bob.deviceID.base32.prefix(3))).match(in: [Self.bob]) == TargetMatch.none)
        #expect(PeerTarget.name("").match(in: [Self.bob]) == TargetMatch.none)
    }

    @Test func sameNameTwiceIsAmbiguous() {
        let match = PeerTarget.name("alice").match(in: [Self.alice, Self.bob, Self.aliceTwo])
        #expect(match == .ambiguous([Self.alice, Self.aliceTwo]))
        #expect(Self.alice.listing == "alice (\(Self.alice.deviceID.shortDescription), peer 0123456789abcdef)")
    }

    @Test func addressTargetMatchesByAddress() throws {
        let target = try PeerTarget.parse("192.168.1.20:41971")
        #expect(target.match(in: [Self.bob, Self.alice]) == .one(Self.alice))
        #expect(try PeerTarget.parse("192.168.1.21:41971").match(in: [Self.alice]) == TargetMatch.none)
    }

    @Test func peerTextIsEscapedForTerminals() {
        let evil = PeerTarget.name("bob\u{1B}[2J")
        #expect(evil.description == "bob\\u{1B}[2J")
        #expect(evil.text == "bob\u{1B}[2J")
        let candidate = PeerCandidate(peerID: PeerID(rawValue: 1), deviceID: Self.device([]), displayName: "x\u{7}")
        #expect(candidate.listing.hasPrefix("x\\u{7} ("))
    }
    // MARK: Issue 28, 9: a name that another device also uses

    @Test func theNameOfAPinnedPeerNamesItThoughAnotherDeviceUsesItAndTheOtherIsNamed() {
        let pinned = [Self.alice.deviceID: "alice"]
        let match = PeerTarget.name("alice").match(in: [Self.aliceTwo, Self.bob, Self.alice], pinned: pinned)
        #expect(match == .pinned(Self.alice, others: [Self.aliceTwo]))
        let warning = match.pinnedNameText("alice") ?? ""
        #expect(warning.contains("another device also calls itself 'alice'"), "\(warning)")
        #expect(warning.contains(Self.aliceTwo.deviceID.shortDescription), "\(warning)")
        #expect(warning.contains("sending to the one you trusted, \(Self.alice.deviceID.shortDescription)"))
        // Case as the peer spells it does not matter: "Alice" still names the pinned device.
        #expect(
            PeerTarget.name("ALICE").match(in: [Self.alice, Self.aliceTwo], pinned: pinned)
                == .pinned(Self.alice, others: [Self.aliceTwo]))
        // The pinned one alone: plainly it.
        #expect(PeerTarget.name("alice").match(in: [Self.alice, Self.bob], pinned: pinned) == .one(Self.alice))
    }

    @Test func theNameOfAPinnedPeerThatIsNotHereNamesNobodyThoughAnotherDeviceAnswersToIt() {
        let pinned = [Self.alice.deviceID: "alice"]
        let match = PeerTarget.name("alice").match(in: [Self.aliceTwo, Self.bob], pinned: pinned)
        #expect(match == .pinnedAbsent(Self.alice.deviceID, others: [Self.aliceTwo]))
        let text = match.pinnedNameText("alice") ?? ""
        #expect(text.contains("'alice' is pinned to device \(Self.alice.deviceID.shortDescription), which is not here"))
        #expect(text.contains("alice (\(Self.aliceTwo.deviceID.shortDescription))"), "\(text)")
        // Its device ID still names the other device: that is not a name anyone can take.
        let prefix = String(Self.aliceTwo.deviceID.description.prefix(9))
        #expect(PeerTarget.name(prefix).match(in: [Self.aliceTwo], pinned: pinned) == .one(Self.aliceTwo))
    }

    /// A peer chooses its peer ID (and can grind a device ID) to spell a pinned name: it does not take the name.
    @Test func anIDPrefixThatSpellsAPinnedNameDoesNotTakeIt() {
        let cafe = PeerCandidate(
            peerID: PeerID(rawValue: 0xcafe_0000_0000_0001), deviceID: Self.device([0x55]), displayName: "printer")
        let owner = PeerCandidate(
            peerID: PeerID(rawValue: 0x0bad_0000_0000_0002), deviceID: Self.device([0x66]), displayName: "kitchen")
        let pinned = [owner.deviceID: "cafe"]
        // The pinned device away: nobody is named, and the one that spelled the name is told of.
        #expect(
            PeerTarget.name("cafe").match(in: [cafe, Self.bob], pinned: pinned)
                == .pinnedAbsent(owner.deviceID, others: [cafe]))
        // The pinned device here under another display name: it is the one named.
        #expect(PeerTarget.name("cafe").match(in: [cafe, owner], pinned: pinned) == .pinned(owner, others: [cafe]))
        #expect(PeerTarget.name("cafe").match(in: [owner], pinned: pinned) == .one(owner))
        // Not pinned, the prefix still picks the peer it spells.
        #expect(PeerTarget.name("cafe").match(in: [cafe, owner], pinned: [:]) == .one(cafe))
    }

    @Test func withoutAPinTwoPeersOfOneNameStayAmbiguous() {
        let pinned = [Self.bob.deviceID: "Bob"]
        #expect(
            PeerTarget.name("alice").match(in: [Self.alice, Self.aliceTwo, Self.bob], pinned: pinned)
                == .ambiguous([Self.alice, Self.aliceTwo]))
        // Both pinned (two installs trusted under one name): still ambiguous, the person must say which.
        let both = [Self.alice.deviceID: "alice", Self.aliceTwo.deviceID: "alice"]
        #expect(
            PeerTarget.name("alice").match(in: [Self.alice, Self.aliceTwo], pinned: both)
                == .ambiguous([Self.alice, Self.aliceTwo]))
    }
}
