import FerryStateMachines
import FuzzSupport

/// libFuzzer entry: the input is a path a peer offers, as raw bytes.
///
/// Valid UTF-8 is checked as is (the offer decoder lets only valid UTF-8 through); any input is also checked after
/// UTF-8 repair (invalid sequences become U+FFFD), so every mutation reaches the validator. Invariant: nothing it
/// accepts is empty, absolute, too long, or has an empty, ".", ".." or reserved component, a NUL, a control or a
/// bidirectional control character; its components rebuild the path exactly.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput.bytes(data, size)
    if let path = String(validating: bytes, as: UTF8.self) {
        NameRules.check(path)
    }
    NameRules.check(String(decoding: bytes, as: UTF8.self))
    return 0
}

@_cdecl("FuzzNameValidator_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
