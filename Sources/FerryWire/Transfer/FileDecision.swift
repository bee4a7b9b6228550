/// The receiver's answer for one offered file: take it (from `resumeOffset` on) or skip it.
///
/// Per file, so a receiver can take some files of an offer and resume others where its verified staged data
/// ends. Entry layout inside an `OfferReply` (9 bytes):
///
/// ```
/// +------------------+--------------+
/// | accepted u8 0/1  | resumeOffset |
/// |                  | u64          |
/// +------------------+--------------+
/// ```
public struct FileDecision: Equatable, Sendable {
    /// Bytes of one entry.
    static let encodedLength = 9

    /// Whether the receiver takes this file.
    public var accepted: Bool
    /// First byte the sender sends: a multiple of the offer's chunk size, at most the file's size (the engine
    /// checks both). 0 for a skipped file.
    public var resumeOffset: UInt64

    /// A decision for one file; `resumeOffset` where the sender starts (0: from the beginning).
    public init(accepted: Bool, resumeOffset: UInt64 = 0) {
        self.accepted = accepted
        self.resumeOffset = resumeOffset
    }

    /// Take the file, from its start or from `resumeOffset`.
    public static func accept(from resumeOffset: UInt64 = 0) -> FileDecision {
        FileDecision(accepted: true, resumeOffset: resumeOffset)
    }

    /// Skip the file.
    public static let skip = FileDecision(accepted: false)
}

extension FileDecision {
    init(from reader: inout ByteReader) throws(WireError) {
        accepted = try reader.readFlag("accepted")
        resumeOffset = try reader.readUInt64("resumeOffset")
    }

    func write(to writer: inout ByteWriter) {
        writer.write(flag: accepted)
        writer.write(resumeOffset)
    }
}
