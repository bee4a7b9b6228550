import FerryStateMachines
import FerryWire
import FuzzSupport

/// libFuzzer entry: the input is one unreliable-message UDP packet, as `Datagram(decoding:)` receives it; its
/// sequence number, then numbers taken from the sealed bytes, go through a `ReplayWindow`.
///
/// Invariants: a decoded datagram carries 16...1216 sealed bytes and re-encodes to exactly the input with the
/// reserved flags byte zeroed (the format has no optional part), which decodes to the same datagram. The replay
/// window agrees with a plain model (a set of recorded numbers and the highest): a number is fresh exactly when
/// it is not 0, not recorded and less than 64 below the highest. The sealed bytes cannot be authenticated here (no
/// key), so they serve as later numbers of the same link: groups of a flags byte (bit 0: record it, as after
/// authentication; bit 1: relative to the highest, bit 2 choosing below or above) and a u64.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    guard let datagram = try? Datagram(decoding: bytes[...]) else { return 0 }
    Invariant.check(
        (Datagram.tagLength...Datagram.maxSealedLength).contains(datagram.sealed.count),
        "sealed payload of \(datagram.sealed.count) bytes")
    guard let encoded = try? datagram.encoded() else { Invariant.fail("a decoded datagram does not encode") }
    var expected = bytes
    expected[3] = 0
    Invariant.check(encoded == expected, "datagram does not re-encode to its input")
    Invariant.check((try? Datagram(decoding: encoded[...])) == datagram, "datagram round trip differs")

    var window = ReplayWindow()
    var model = ReplayModel()
    window.check(datagram.sequence, record: true, against: &model)
    var input = FuzzInput(datagram.sealed)
    while input.remainingCount > 0 {
        let flags = input.takeByte()
        let value = input.takeInteger(byteCount: 8)
        var sequence = value
        if flags & 2 != 0 {
            sequence = flags & 4 == 0 ? window.highest &- (value & 0x7F) : window.highest &+ (value & 0x7F)
        }
        window.check(sequence, record: flags & 1 != 0, against: &model)
    }
    return 0
}

/// What `ReplayWindow` must answer, without bit tricks.
struct ReplayModel {
    var recorded: Set<UInt64> = []
    var highest: UInt64 = 0

    func isFresh(_ sequence: UInt64) -> Bool {
        sequence != 0 && !recorded.contains(sequence) && (sequence > highest || highest - sequence < 64)
    }

    mutating func record(_ sequence: UInt64) {
        guard sequence != 0, sequence > highest || highest - sequence < 64 else { return }
        recorded.insert(sequence)
        highest = max(highest, sequence)
    }
}

extension ReplayWindow {
    mutating func check(_ sequence: UInt64, record: Bool, against model: inout ReplayModel) {
        let fresh = isFresh(sequence)
        Invariant.check(fresh == model.isFresh(sequence), "replay window says fresh \(fresh) for \(sequence)")
        guard record else { return }
        self.record(sequence)
        model.record(sequence)
        Invariant.check(!isFresh(sequence), "sequence \(sequence) still fresh after it was recorded")
        Invariant.check(highest == model.highest, "replay window highest \(highest), expected \(model.highest)")
    }
}

@_cdecl("FuzzDatagram_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
