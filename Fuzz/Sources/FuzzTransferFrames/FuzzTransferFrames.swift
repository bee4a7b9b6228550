import FerryWire
import FuzzSupport

/// libFuzzer entry: a sequence of transfer frames from a sending peer, decoded and driven through the receiving
/// side's machine the way the transfer engine does.
///
/// Input: records of a kind byte (kind 0x0100 + byte), a u16 payload length and the payload (cut short at the
/// end of the input). Every record is decoded (all seven transfer messages and unknown kinds) with the round-trip
/// checks of `RoundTrip.transfer`; the decoded messages then drive `ReceiverModel` until the first protocol
/// error, after which the engine would close the link.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var receiver = ReceiverModel()
    var linkOpen = true
    while input.remainingCount > 0 {
        let kind = FrameKind(0x0100 | UInt16(input.takeByte()))
        let length = Int(input.takeInteger(byteCount: 2))
        let frame = Frame(kind: kind, payload: input.takeBytes(length))
        let message = RoundTrip.transfer(frame)
        if linkOpen {
            guard let message else {
                linkOpen = false
                continue
            }
            linkOpen = receiver.receive(message)
        }
    }
    return 0
}

@_cdecl("FuzzTransferFrames_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
