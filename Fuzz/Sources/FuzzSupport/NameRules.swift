import FerryStateMachines

/// The containment rules every name accepted by `NameValidator` must satisfy, checked independently of it.
///
/// Why: the validator is the one gate between a peer's path and the file system (issue 4, promise 1); the fuzzer
/// looks for a name it lets through that could escape the receive directory or fool a terminal.
public enum NameRules {
    /// Runs the validator on `path` and traps if it accepts a name that breaks a rule, or if the components it
    /// returns are not exactly the path's.
    public static func check(_ path: String) {
        guard case .success(let components) = NameValidator.components(of: path) else { return }
        let bytes = Array(path.utf8)
        Invariant.check(!bytes.isEmpty, "accepted an empty name")
        Invariant.check(bytes.count <= NameValidator.maximumPathBytes, "accepted a name of \(bytes.count) bytes")
        Invariant.check(bytes.first != UInt8(ascii: "/"), "accepted an absolute name")
        Invariant.check(!bytes.contains(0), "accepted a name with NUL")
        Invariant.check(components.joined(separator: "/") == path, "components do not rebuild the name")
        for component in components {
            let utf8 = Array(component.utf8)
            Invariant.check(!utf8.isEmpty, "accepted an empty component")
            Invariant.check(utf8 != Array(".".utf8) && utf8 != Array("..".utf8), "accepted a . or .. component")
            Invariant.check(!utf8.contains(UInt8(ascii: "/")), "a component contains /")
            Invariant.check(utf8.count <= NameValidator.maximumComponentBytes, "accepted a long component")
            Invariant.check(component != NameValidator.reservedName, "accepted the staging folder's name")
        }
        for scalar in path.unicodeScalars {
            let value = scalar.value
            Invariant.check(value >= 0x20 && !(0x7F...0x9F).contains(value), "accepted control U+\(value)")
            let bidi: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E]
            Invariant.check(!bidi.contains(value) && !(0x2066...0x2069).contains(value), "accepted bidi U+\(value)")
        }
    }
}
