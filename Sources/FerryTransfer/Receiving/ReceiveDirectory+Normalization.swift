import FerrySystem
import Foundation

/// Received names are published in Unicode Normalization Form C, and a name whose NFD twin exists is taken.
///
/// Why: "café" can be spelled with a precomposed "é" (NFC, as Linux and Windows usually write it) or with "e"
/// and a combining accent (NFD, as macOS file systems hand it out). Linux compares names as bytes, so both could
/// sit side by side looking identical, and a user (or a script that normalises) would open the wrong one. ferry
/// therefore writes every received name in NFC, so its own files never differ only in normalisation, and counts a
/// name as taken when the directory already holds it in NFC or NFD: the newcomer gets a numbered variant, as for
/// any other taken name. An existing directory spelled in NFD is reused rather than doubled.
/// Not covered: names that another program wrote in some other, partly composed form.
extension ReceiveDirectory {
    /// The form a received path is validated and published in: NFC (ASCII is returned as it is).
    public static func publishedForm(_ path: String) -> String {
        path.utf8.allSatisfy { $0 < 0x80 } ? path : path.precomposedStringWithCanonicalMapping
    }

    /// The NFD spelling of `name` when it differs from `name` in bytes, else nil.
    static func decomposedTwin(_ name: String) -> String? {
        guard !name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let twin = name.decomposedStringWithCanonicalMapping
        return twin.utf8.elementsEqual(name.utf8) ? nil : twin
    }

    /// Whether `directory` holds the NFD twin of `name` (of any kind, symlinks included: never followed).
    static func twinExists(of name: String, in directory: DirectoryHandle) -> Bool {
        guard let twin = decomposedTwin(name) else { return false }
        return (try? directory.status(of: twin)) != nil
    }

    /// The directory component to open for `name`: its NFD twin when only the twin exists as a directory.
    static func existingSpelling(of name: String, in directory: DirectoryHandle) -> String {
        guard let twin = decomposedTwin(name), (try? directory.status(of: name)) == nil,
            (try? directory.status(of: twin))?.kind == .directory
        else { return name }
        return twin
    }
}
