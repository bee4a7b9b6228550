import FerryWire
import FuzzSupport

/// libFuzzer entry: the input is one discovery packet, as `Beacon(decoding:)` receives it from UDP.
///
/// Invariants: a decoded beacon validates, encodes to at most 180 bytes that decode to the same beacon, and its
/// encoding is the input with the reserved byte zeroed and the extension bytes dropped.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    guard let beacon = try? Beacon(decoding: bytes[...]) else { return 0 }
    Invariant.check((try? beacon.validate()) != nil, "decoded beacon does not validate")
    let encoded = beacon.encoded()
    Invariant.check(encoded.count <= 180, "beacon encodes to \(encoded.count) bytes")
    Invariant.check((try? Beacon(decoding: encoded[...])) == beacon, "beacon changes in a round trip")
    var expected = Array(bytes.prefix(encoded.count))
    if expected.count > 7 { expected[7] = 0 }
    Invariant.check(encoded == expected, "beacon encoding is not the input's prefix")
    return 0
}

@_cdecl("FuzzBeacon_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
