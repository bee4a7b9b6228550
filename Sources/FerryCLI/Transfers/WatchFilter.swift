/// Which names in a watched directory `ferry watch` leaves alone: hidden files and files still being made.
///
/// Editors, browsers and download tools write under a temporary name and rename when done (`report.pdf.part`
/// becomes `report.pdf`); sending the temporary file would send half a file, then the whole one again. The rules
/// are on names only, so they are the same for a file that is written in place and one that is moved in.
public enum WatchFilter {
    /// Suffixes of files in the making, compared without regard to case: backups (`~`), `.tmp`, partial
    /// downloads (`.part`, `.crdownload`) and vim swap files (`.swp`).
    public static let temporarySuffixes = ["~", ".tmp", ".part", ".swp", ".crdownload"]

    /// Whether `name` (one path component) is skipped: hidden (leading `.`, which includes Emacs lock files
    /// `.#name`), Emacs auto-save files (leading `#`), or a temporary suffix.
    public static func isSkipped(_ name: String) -> Bool {
        if name.isEmpty || name.hasPrefix(".") || name.hasPrefix("#") {
            return true
        }
        let lowered = name.lowercased()
        return temporarySuffixes.contains { lowered.hasSuffix($0) }
    }
}
