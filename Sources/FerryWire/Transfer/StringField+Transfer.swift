/// Length rules of the transfer protocol's text fields, shared by encoders and decoders.
extension StringField {
    static let pathLengths = 1...Limits.maxTransferPathLength
    static let mediaTypeLengths = 0...Limits.maxMediaTypeLength

    /// Media types are printable ASCII without spaces (0x21-0x7E), e.g. "image/jpeg".
    static func checkMediaType<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ field: String) throws(WireError) {
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .invalidField("\(field): not printable ASCII")
        }
    }

    /// Swarm member addresses follow the media type's rule: printable ASCII without spaces (0x21-0x7E).
    static func checkPrintableASCII<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ field: String) throws(WireError) {
        try checkMediaType(bytes, field)
    }
}
