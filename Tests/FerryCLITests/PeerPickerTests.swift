import FerrySystem
import FerryWire
import Testing

@testable import FerryCLI

/// The peer picker's typed lines (numbers, names, `all`, an empty Enter) and its rows.
@Suite struct PeerPickerTests {
    static func peer(_ number: UInt64, _ name: String, device: UInt8, port: UInt16? = nil) -> PeerCandidate {
        PeerCandidate(
            peerID: PeerID(rawValue: 0x1000 + number),
            deviceID: DeviceID(bytes: [device] + [UInt8](repeating: 0, count: DeviceID.length - 1))!,
            displayName: name, address: port.map { .ipv4(IPv4Address(192, 168, 1, 20), port: $0) })
    }

    static let shown = [
        peer(1, "alice-laptop", device: 0x10, port: 41971), peer(2, "Bob", device: 0x20, port: 5),
        peer(3, "bobby's desk", device: 0x30), peer(4, "carol", device: 0x40),
    ]

    @Test func numbersInTheOrderTypedWithoutDuplicates() {
        #expect(PeerPicker.choice("1 3", among: Self.shown) == .success([1, 3]))
        #expect(PeerPicker.choice(" 2,1, 2 ", among: Self.shown) == .success([2, 1]))
        #expect(
            PeerPicker.choice("5", among: Self.shown)
                == .failure(PickerInputError(message: "'5': type numbers from 1 to 4")))
        #expect(
            PeerPicker.choice("0", among: Self.shown)
                == .failure(PickerInputError(message: "'0': type numbers from 1 to 4")))
        #expect(
            PeerPicker.choice("1", among: [])
                == .failure(PickerInputError(message: "'1': no peer is listed yet")))
    }

    @Test func namesExactlyIgnoringCaseOrByAUniqueStart() {
        #expect(PeerPicker.choice("carol", among: Self.shown) == .success([4]))
        #expect(PeerPicker.choice("CAROL", among: Self.shown) == .success([4]))
        #expect(PeerPicker.choice("ali", among: Self.shown) == .success([1]))
        // "bob" is Bob ignoring case, before it is the start of "bobby's desk".
        #expect(PeerPicker.choice("bob", among: Self.shown) == .success([2]))
        #expect(PeerPicker.choice("bobby", among: Self.shown) == .success([3]))
        // A whole line that is a name with a space needs no quotes.
        #expect(PeerPicker.choice("Bobby's Desk", among: Self.shown) == .success([3]))
        #expect(PeerPicker.choice("carol, 1 ALI", among: Self.shown) == .success([4, 1]))
        // The start of a device ID, as --to takes it.
        #expect(PeerPicker.choice("EAAA", among: Self.shown) == .success([2]))
    }

    @Test func anAmbiguousOrUnknownNameChoosesNobodyAndSaysWhy() {
        let two = [Self.peer(1, "bob-one", device: 1), Self.peer(2, "bob-two", device: 2)]
        #expect(
            PeerPicker.choice("bob", among: two)
                == .failure(
                    PickerInputError(
                        message: "'bob' matches 2 peers: 1) bob-one, 2) bob-two; type more of the name, or the number"
                    )))
        #expect(
            PeerPicker.choice("1 dave", among: Self.shown)
                == .failure(
                    PickerInputError(
                        message:
                            "'dave' names no peer listed; type a number (1 to 4), a name or all, then Enter; Ctrl-C "
                            + "cancels")))
    }

    @Test func allIsEveryPeerShown() {
        #expect(PeerPicker.choice("all", among: Self.shown) == .success([1, 2, 3, 4]))
        #expect(PeerPicker.choice("3 ALL", among: Self.shown) == .success([3, 1, 2, 4]))
        #expect(
            PeerPicker.choice("all", among: [])
                == .failure(
                    PickerInputError(
                        message:
                            "'all': no peer is listed yet: wait for one to appear, then type its number or name; "
                            + "Ctrl-C cancels")))
    }

    @Test func anEmptyEnterSaysWhyNothingHappened() {
        for line in ["", "   ", "\t"] {
            #expect(
                PeerPicker.choice(line, among: Self.shown)
                    == .failure(
                        PickerInputError(
                            message:
                                "nothing chosen: type a number (1 to 4), a name or all, then Enter; Ctrl-C cancels")))
        }
        #expect(
            PeerPicker.choice("", among: [])
                == .failure(
                    PickerInputError(
                        message:
                            "nothing chosen: no peer is listed yet: wait for one to appear, then type its number or "
                            + "name; Ctrl-C cancels")))
    }

    @Test func rowsAlignWhateverTheNames() {
        let peers = [
            Self.peer(1, "a", device: 0x10, port: 41971),
            Self.peer(2, "a much longer display name", device: 0x20, port: 5),
            Self.peer(3, "evil\u{1B}[2J\u{202E}name", device: 0x30),
            Self.peer(4, "Zoë's 日本 laptop", device: 0x40, port: 65535),
        ]
        var rows = [PeerPicker.header]
        for (index, peer) in peers.enumerated() {
            rows.append(PeerPicker.row(number: index == 3 ? 12 : index + 1, peer))
        }
        #expect(
            rows == [
                "   #  device     address                name",
                "   1) CAAA-AAAA  192.168.1.20:41971     a",
                "   2) EAAA-AAAA  192.168.1.20:5         a much longer display name",
                "   3) GAAA-AAAA  -                      evil\\u{1B}[2J\\u{202E}name",
                "  12) IAAA-AAAA  192.168.1.20:65535     Zoë's 日本 laptop",
            ])
        // Every column starts where the header's does.
        for row in rows.dropFirst() {
            let characters = Array(row)
            guard characters.count > 40 else {
                Issue.record("row too short: \(row)")
                continue
            }
            #expect(characters[4] == ")" && characters[5] == " " && characters[6] != " ", "\(row)")
            #expect(characters[17] != " " && characters[39] == " " && characters[40] != " ", "\(row)")
        }
    }
}
