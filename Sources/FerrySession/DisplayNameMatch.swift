import Foundation

/// Whether two display names are the same name as a person reads them: what a pinned peer's name is compared with.
///
/// A stranger who wants to pass for a pinned peer picks a name that looks like it. Compared after: compatibility
/// normalisation (NFKC: full-width "ａｌｉｃｅ" and ligatures become plain letters), dropping invisible format
/// characters (zero-width space and joiners, bidi controls, the BOM), trimming surrounding white space, and
/// ignoring case. Look-alike letters of other scripts (Cyrillic "а" for Latin "a") are not caught: that takes
/// Unicode's confusables data, which ferry does not carry.
public enum DisplayNameMatch {
    /// True when `one` and `other` read as the same name.
    public static func same(_ one: String, _ other: String) -> Bool {
        key(one) == key(other)
    }

    /// The form names are compared in.
    public static func key(_ name: String) -> String {
        let compatible = name.precomposedStringWithCompatibilityMapping
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: compatible.unicodeScalars.filter { $0.properties.generalCategory != .format })
        let visible = String(scalars)
        let trimmed = visible.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.lowercased()
    }
}
