import FerryTransfer

/// What a person reads about the entries of folders that were left out (`ferry send`, `ferry hash`).
enum SkippedEntries {
    /// "2 symbolic links, 1 special file and 1 name that is not UTF-8": each kind counted, the empty ones left out.
    static func counted(_ skipped: [SourceFile.Skipped]) -> String {
        func count(_ kind: SourceFile.Skipped.Kind, _ one: String, _ many: String) -> String? {
            let count = skipped.filter { $0.kind == kind }.count
            return count == 0 ? nil : count == 1 ? "1 \(one)" : "\(count) \(many)"
        }
        let kinds = [
            count(.symbolicLink, "symbolic link", "symbolic links"), count(.special, "special file", "special files"),
            count(.undecodableName, "name that is not UTF-8", "names that are not UTF-8"),
        ].compactMap { $0 }
        return kinds.dropLast().joined(separator: ", ") + (kinds.count > 1 ? " and " : "") + (kinds.last ?? "")
    }
}
