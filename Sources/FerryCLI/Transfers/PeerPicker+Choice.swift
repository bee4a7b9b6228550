import Foundation
import FerryWire

extension PeerPicker {
    /// The column headings above the first row.
    static let header = "   #  device     address                name"

    /// How wide the address column is: an IPv4 address with its port (`255.255.255.255:65535`) fits; a longer
    /// (IPv6) one pushes the name one space further.
    static let addressWidth = 21

    /// `  2) ABCD-EFGH  192.168.1.20:41971     alice-laptop`: the number right-aligned, then the columns of fixed
    /// width (device ID, address), then the display name, escaped.
    ///
    /// The name comes last because it is the only column of any width: display names are chosen by peers (up to
    /// 64 bytes, any script, escaped control characters make them longer still), and rows are printed as peers
    /// appear, so a padded name column would either cut names (which then cannot be typed whole) or break its
    /// alignment at the first long one.
    static func row(number: Int, _ peer: PeerCandidate) -> String {
        let numberText = String(number)
        let numberColumn = String(repeating: " ", count: max(0, 4 - numberText.count)) + numberText + ")"
        let address = peer.address?.description ?? "-"
        let padding = String(repeating: " ", count: max(1, addressWidth + 2 - address.count))
        return "\(numberColumn) \(peer.deviceID.shortDescription)  \(address)\(padding)"
            + TerminalText.escape(peer.displayName)
    }

    /// What to type, shown after an empty line or one that names nobody.
    static func hint(count: Int) -> String {
        count == 0
            ? "no peer is listed yet: wait for one to appear, then type its number or name; Ctrl-C cancels"
            : "type a number (1 to \(count)), a name or all, then Enter; Ctrl-C cancels"
    }

    /// The peers a typed line chooses, as numbers (1-based, in the order typed, without duplicates), or the
    /// message to show.
    ///
    /// The line is a list of words separated by spaces or commas; each word is a number shown, `all` (every peer
    /// shown, any case), or a name: matched as `--to` matches (exact display name, then ignoring case, then the
    /// start of a device ID or peer ID of at least 4 characters), then as the unique start of a display name
    /// ignoring case. A whole line that matches a display name is that one peer, so names with spaces need no
    /// quotes. An empty line, an unknown or ambiguous word chooses nobody and says why.
    static func choice(_ line: String, among shown: [PeerCandidate]) -> Result<[Int], PickerInputError> {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            return .failure(PickerInputError(message: "nothing chosen: " + hint(count: shown.count)))
        }
        if Int(trimmed) == nil, case .one(let index) = nameMatch(trimmed, among: shown, prefixes: false) {
            return .success([index + 1])
        }
        var numbers: [Int] = []
        func add(_ number: Int) {
            if !numbers.contains(number) {
                numbers.append(number)
            }
        }
        for word in trimmed.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init) {
            let quoted = "'\(TerminalText.excerpt(word))'"
            if let number = Int(word) {
                guard (1...max(shown.count, 1)).contains(number), !shown.isEmpty else {
                    let range = shown.isEmpty ? "no peer is listed yet" : "type numbers from 1 to \(shown.count)"
                    return .failure(PickerInputError(message: "\(quoted): \(range)"))
                }
                add(number)
                continue
            }
            if word.lowercased() == "all" {
                guard !shown.isEmpty else {
                    return .failure(PickerInputError(message: "\(quoted): " + hint(count: 0)))
                }
                shown.indices.forEach { add($0 + 1) }
                continue
            }
            switch nameMatch(word, among: shown, prefixes: true) {
            case .one(let index):
                add(index + 1)
            case .ambiguous(let indices):
                let names = indices.map { "\($0 + 1)) \(TerminalText.escape(shown[$0].displayName))" }
                return .failure(
                    PickerInputError(
                        message: "\(quoted) matches \(indices.count) peers: \(names.joined(separator: ", ")); "
                            + "type more of the name, or the number"))
            case .none:
                return .failure(
                    PickerInputError(message: "\(quoted) names no peer listed; " + hint(count: shown.count)))
            }
        }
        return .success(numbers)
    }

    private enum NameMatch {
        case none
        case one(Int)
        case ambiguous([Int])
    }

    /// Which shown peer `text` names: `PeerTarget`'s rules, then (with `prefixes`) a unique start of a display name
    /// ignoring case.
    private static func nameMatch(_ text: String, among shown: [PeerCandidate], prefixes: Bool) -> NameMatch {
        func indices(of matches: [PeerCandidate]) -> [Int] {
            shown.indices.filter { index in matches.contains { $0.peerID == shown[index].peerID } }
        }
        switch PeerTarget.name(text).match(in: shown) {
        case .one(let candidate):
            return indices(of: [candidate]).first.map(NameMatch.one) ?? .none
        case .ambiguous(let matches):
            return .ambiguous(indices(of: matches))
        case .none, .pinned, .pinnedAbsent:
            break
        }
        guard prefixes else { return .none }
        let lowered = text.lowercased()
        let starts = shown.indices.filter { shown[$0].displayName.lowercased().hasPrefix(lowered) }
        switch starts.count {
        case 0: return .none
        case 1: return .one(starts[0])
        default: return .ambiguous(starts)
        }
    }
}
