import FerryStateMachines
import FerryWire
import FuzzSupport

/// libFuzzer entry: the input is the payload of an offer frame (kind 0x0100), the largest and most structured
/// message a peer sends before the receiver has agreed to anything.
///
/// Invariants: a decoded offer validates, its chunk size and file count are in range, it re-encodes to a prefix
/// of the payload and decodes to itself; every offered path then goes through `NameValidator`, as on receipt, and
/// nothing the validator accepts breaks a containment rule; a digests section decoded names only offered files; a
/// folders section decoded holds at most `Limits.maxOfferFolders` paths of 1...4096 bytes, each of which goes through
/// `NameValidator` and its containment rules as a file's path does.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let frame = Frame(kind: .offer, payload: FuzzInput.bytes(data, size))
    guard case .offer(let offer) = RoundTrip.transfer(frame) else { return 0 }
    Invariant.check(
        (Limits.minChunkSize...Limits.maxChunkSize).contains(Int(offer.chunkSize)), "chunk size \(offer.chunkSize)")
    Invariant.check((1...Limits.maxOfferFiles).contains(offer.files.count), "\(offer.files.count) files")
    for (index, digest) in offer.fileDigests {
        Invariant.check(offer.files.indices.contains(index), "a digest for file \(index) of \(offer.files.count)")
        Invariant.check(digest.count == 32, "a digest of \(digest.count) bytes")
    }
    for file in offer.files {
        Invariant.check(!file.path.isEmpty && file.path.utf8.count <= Limits.maxTransferPathLength, "path length")
        NameRules.check(file.path)
    }
    Invariant.check(offer.folders.count <= Limits.maxOfferFolders, "\(offer.folders.count) folders")
    for folder in offer.folders {
        Invariant.check(!folder.isEmpty && folder.utf8.count <= Limits.maxTransferPathLength, "folder path length")
        NameRules.check(folder)
    }
    return 0
}

@_cdecl("FuzzOffer_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
