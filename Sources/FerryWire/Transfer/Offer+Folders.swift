/// The offer's folders section (PROTOCOL.md 11.3), after a digests section (written as `00 00 00 00` when the offer
/// has no digest, and after an empty swarm section `00 00` when it has no swarm):
///
/// ```
/// +-------+-------------+-------------------------------------------+
/// | flags | folderCount | folderCount x path str16 (1...4096 bytes) |
/// | u8    | u32         | relative, "/"-separated, as a file path   |
/// +-------+-------------+-------------------------------------------+
/// ```
///
/// `folderCount` is at most `Limits.maxOfferFolders`. A section that does not parse (a truncated flags byte or count,
/// a count above the limit, a path that is empty, too long or not UTF-8, fewer bytes than its paths need) is read as
/// absent (no folder, no flag), never as an error: bytes a later minor version appends in this place are not taken
/// for folders, and a lost section only costs the empty folders (and a replacement, which falls back to a numbered
/// name). A receiver of before the section skips it as trailing bytes.
extension Offer {
    /// Whether the folders section is written: there is a folder or a flag.
    var hasFoldersSection: Bool { !folders.isEmpty || !flags.isEmpty }

    /// Bytes of the folders section (0 when it is not written).
    var foldersLength: Int {
        hasFoldersSection ? folders.reduce(1 + 4) { $0 + 2 + $1.utf8.count } : 0
    }

    /// Throws `invalidField` for more folders than `Limits.maxOfferFolders` or a path of 0 or more than 4096 bytes.
    func validateFolders() throws(WireError) {
        guard folders.count <= Limits.maxOfferFolders else {
            throw .invalidField("folderCount: \(folders.count), above \(Limits.maxOfferFolders)")
        }
        for folder in folders {
            try StringField.validate(folder, "folder", lengths: StringField.pathLengths)
        }
    }

    /// The folders section's folders and flags, or none when it is absent or does not parse (read as absent).
    static func readFolders(from reader: inout ByteReader) -> (folders: [String], flags: OfferFlags) {
        var copy = reader
        guard copy.remainingCount >= 5, let flags = try? copy.readUInt8("flags"),
            let count = try? copy.readUInt32("folderCount"), count <= Limits.maxOfferFolders,
            copy.remainingCount / 3 >= Int(count)  // each path takes at least 3 bytes
        else { return ([], []) }
        var folders: [String] = []
        folders.reserveCapacity(Int(count))
        for _ in 0..<Int(count) {
            guard let path = try? copy.readString16("folder", lengths: StringField.pathLengths) else { return ([], []) }
            folders.append(path)
        }
        reader = copy
        return (folders, OfferFlags(rawValue: flags))
    }

    func writeFolders(to writer: inout ByteWriter) {
        guard hasFoldersSection else { return }
        writer.write(flags.rawValue)
        writer.write(UInt32(folders.count))
        for folder in folders {
            writer.write(string16: folder)
        }
    }
}
