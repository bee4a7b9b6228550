/// Checks of what must hold for every input; a violation traps, which libFuzzer reports as a crash with the input.
///
/// Why: a fuzz target that only looks for traps misses decoders that accept what they should refuse, or decode
/// differently in pieces than whole. Each check names the property, so the crash report says which one broke.
public enum Invariant {
    /// Traps with `message` unless `condition` holds.
    public static func check(
        _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
        file: StaticString = #fileID, line: UInt = #line
    ) {
        if !condition() {
            fatalError("fuzz invariant violated: \(message())", file: file, line: line)
        }
    }

    /// Traps: this point must be unreachable for any input.
    public static func fail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        fatalError("fuzz invariant violated: \(message)", file: file, line: line)
    }
}
