import FerryWire
import FuzzSupport

/// libFuzzer entry: a LocalSend JSON body from a peer.
///
/// Input: a selector byte (mod 4: device info / announcement, prepare-upload, prepare-upload reply, error body);
/// the rest is the body. Invariants: decoding throws `HTTPError` or yields a value whose bounds hold (sizes >= 0,
/// ports 1...65535, at most `maxFiles` files, strings within their limits) and that encodes to JSON decoding back
/// to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let selector = input.takeByte() % 4
    let body = input.takeRest()[...]
    switch selector {
    case 0:
        guard let device = try? LocalSendDevice(json: body) else { return 0 }
        check(device)
        Invariant.check((try? LocalSendDevice(json: device.encoded()[...])) == device, "device round trip differs")
    case 1:
        guard let upload = try? LocalSendPrepareUpload(json: body) else { return 0 }
        check(upload.info)
        Invariant.check(!upload.files.isEmpty && upload.files.count <= LocalSendLimits.maxFiles, "file count")
        for file in upload.files {
            Invariant.check(file.size >= 0, "negative size")
            Invariant.check(file.fileName.utf8.count <= LocalSendLimits.maxFileNameBytes, "long file name")
            Invariant.check(file.id.utf8.count <= LocalSendLimits.maxIdentifierBytes, "long id")
        }
        Invariant.check(
            (try? LocalSendPrepareUpload(json: upload.encoded()[...])) == upload, "prepare-upload round trip differs")
    case 2:
        guard let reply = try? LocalSendPrepareUploadReply(json: body) else { return 0 }
        Invariant.check(reply.tokens.count <= LocalSendLimits.maxFiles, "token count")
        Invariant.check((try? LocalSendPrepareUploadReply(json: reply.encoded()[...])) == reply, "reply round trip")
    default:
        guard let error = try? LocalSendErrorBody(json: body) else { return 0 }
        Invariant.check(error.message.utf8.count <= LocalSendLimits.maxMessageBytes, "long message")
        Invariant.check((try? LocalSendErrorBody(json: error.encoded()[...])) == error, "error body round trip")
    }
    return 0
}

func check(_ device: LocalSendDevice) {
    Invariant.check(device.alias.utf8.count <= LocalSendLimits.maxAliasBytes, "long alias")
    if let port = device.port { Invariant.check((1...65535).contains(port), "port \(port)") }
}

@_cdecl("FuzzLocalSendJSON_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
