/// The one function that decides whether a path a peer sent may be created inside the receive directory.
///
/// Why: a name from the network is the classic way out of a download folder (`../../.bashrc`, `/etc/passwd`),
/// and a way to fool whoever reads it later (control characters that rewrite a terminal line, right-to-left
/// overrides that turn `gpj.exe` into `exe.jpg`). As in syncthing, every incoming name goes through this one
/// function, and the receiver then creates the components one by one without following symlinks.
///
/// Rules, checked in this order, on the UTF-8 bytes (file systems compare bytes, not Unicode equivalence):
/// 1. not empty (`.empty`), at most 4096 bytes (`.tooLong`), no NUL (`.nul`), not starting with "/" (`.absolute`);
/// 2. split at every "/": no empty component, so no "//" and no trailing "/" (`.emptyComponent`), no "."
///    (`.emptyComponent`), no ".." (`.parentReference`), each at most 255 bytes (`.tooLong`);
/// 3. no control character: C0, DEL, C1 (`.controlCharacter`); no bidirectional control: U+061C, U+200E,
///    U+200F, U+202A-U+202E, U+2066-U+2069 (`.bidiControl`);
/// 4. no component equal to the staging folder's name `.ferry-staging` once case-folded, with default-ignorable
///    code points left out (`.reserved`): on a file system that ignores case (vfat, exfat, ext4 with `casefold`),
///    `.FERRY-STAGING/x`, `.ferry-\u{17F}taging/x` or `.ferry\u{200D}-staging/x` could open the staging folder
///    itself.
/// Backslashes, spaces, leading dots and every other Unicode character are valid on Linux and accepted.
/// The receiver passes the name in the form it will publish it in (NFC: `ReceiveDirectory.publishedForm`), so the
/// lengths checked are the lengths written.
public enum NameValidator {
    /// The receive directory's hidden staging folder; no received path may name it.
    public static let reservedName = ".ferry-staging"
    /// Longest accepted path, in UTF-8 bytes (Linux PATH_MAX).
    public static let maximumPathBytes = 4096
    /// Longest accepted component, in UTF-8 bytes (Linux NAME_MAX).
    public static let maximumComponentBytes = 255

    /// The components of `path` if a peer may create it inside the receive directory, else the first rule it
    /// breaks.
    public static func components(of path: String) -> Result<[String], NameError> {
        let bytes = path.utf8
        if bytes.isEmpty { return .failure(.empty) }
        if bytes.count > maximumPathBytes { return .failure(.tooLong) }
        if bytes.contains(0) { return .failure(.nul) }
        if bytes.first == UInt8(ascii: "/") { return .failure(.absolute) }
        var components: [String] = []
        // Split the bytes, not the Characters: "/" followed by a combining mark is one Character.
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.isEmpty || component.elementsEqual(".".utf8) { return .failure(.emptyComponent) }
            if component.elementsEqual("..".utf8) { return .failure(.parentReference) }
            if component.count > maximumComponentBytes { return .failure(.tooLong) }
            components.append(String(Substring(component)))
        }
        for scalar in path.unicodeScalars {
            if isControl(scalar) { return .failure(.controlCharacter) }
            if isBidiControl(scalar) { return .failure(.bidiControl) }
        }
        if components.contains(where: isReserved) { return .failure(.reserved) }
        return .success(components)
    }

    /// Whether `component` is the reserved name as a case-insensitive file system may compare it: Unicode full case
    /// folding (CaseFolding.txt, statuses C and F), exFAT's upper-casing (dotless i), and default-ignorable code
    /// points left out (older kernels' ext4 `casefold` drops them). The name is ASCII, so only folds that yield
    /// ASCII can make a component equal to it: ASCII capitals, and the few scalars mapped below; any other scalar
    /// folds to something that is not ASCII and so never matches.
    static func isReserved(_ component: String) -> Bool {
        var folded: [UInt8] = []
        for scalar in component.unicodeScalars {
            if isDefaultIgnorable(scalar) { continue }
            switch scalar.value {
            case 0x41...0x5A: folded.append(UInt8(scalar.value) + 0x20)  // A-Z
            case 0x00...0x7F: folded.append(UInt8(scalar.value))
            case 0x017F: folded += Array("s".utf8)  // long s
            case 0x0131: folded += Array("i".utf8)  // dotless i: exFAT's up-case table maps it to I
            case 0x212A: folded += Array("k".utf8)  // Kelvin sign
            case 0x00DF, 0x1E9E: folded += Array("ss".utf8)  // sharp s
            case 0xFB00: folded += Array("ff".utf8)
            case 0xFB01: folded += Array("fi".utf8)
            case 0xFB02: folded += Array("fl".utf8)
            case 0xFB03: folded += Array("ffi".utf8)
            case 0xFB04: folded += Array("ffl".utf8)
            case 0xFB05, 0xFB06: folded += Array("st".utf8)  // long s t, s t ligatures
            default: return false
            }
        }
        return folded.elementsEqual(reservedName.utf8)
    }

    /// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), which renderers do not show and some
    /// case-insensitive file systems drop when they compare names.
    static func isDefaultIgnorable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00AD, 0x034F, 0x061C, 0x115F...0x1160, 0x17B4...0x17B5, 0x180B...0x180F, 0x200B...0x200F,
            0x202A...0x202E, 0x2060...0x206F, 0x3164, 0xFE00...0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0...0xFFF8,
            0x1BCA0...0x1BCA3, 0x1D173...0x1D17A, 0xE0000...0xE0FFF:
            return true
        default: return false
        }
    }

    /// C0 controls, DEL and C1 controls.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Characters that change the display direction of the text around them.
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}

/// Why `NameValidator` refused a path a peer sent. Kept beside the validator, its only producer.
///
/// Why: the receiver denies the offer with this reason and the CLI shows it; each case names the rule, so a
/// user can tell "a peer tried `../`" from "a name was too long".
public enum NameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path is empty.
    case empty
    /// The path starts with "/".
    case absolute
    /// A component is "..".
    case parentReference
    /// A component is empty or "." (from "//", a trailing "/", or "./").
    case emptyComponent
    /// The path contains a NUL byte.
    case nul
    /// The path contains a control character (C0, DEL or C1).
    case controlCharacter
    /// The path is longer than 4096 bytes, or a component longer than 255 bytes (UTF-8).
    case tooLong
    /// A component is ".ferry-staging", the receive directory's staging folder.
    case reserved
    /// The path contains a bidirectional control character (e.g. U+202E RIGHT-TO-LEFT OVERRIDE).
    case bidiControl

    /// Why the name was refused, in words for the sending user.
    public var description: String {
        switch self {
        case .empty: return "the name is empty"
        case .absolute: return "the name is an absolute path (starts with \"/\")"
        case .parentReference: return "the name refers to a parent directory (\"..\")"
        case .emptyComponent: return "the name has an empty or \".\" component (\"//\", \"./\" or a trailing \"/\")"
        case .nul: return "the name contains a NUL byte"
        case .controlCharacter: return "the name contains a control character"
        case .tooLong: return "the name is too long (over 4096 bytes, or a component over 255 bytes)"
        case .reserved: return "the name uses the reserved name \".ferry-staging\""
        case .bidiControl: return "the name contains a bidirectional text control character"
        }
    }
}
