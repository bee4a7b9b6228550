import CFuzzerDriver

/// Starts libFuzzer from the `main` SwiftPM gives an executable target.
///
/// Why: SwiftPM renames an executable's entry point to `<Target>_main` and links with `--defsym main=<Target>_main`,
/// which replaces libFuzzer's own `main`. Each target therefore defines `<Target>_main` and hands over to
/// `LLVMFuzzerRunDriver`, libFuzzer's entry for programs that own `main`; the command line is libFuzzer's as usual.
public enum FuzzDriver {
    /// The fuzzer callback: libFuzzer's `LLVMFuzzerTestOneInput` signature.
    public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    /// Runs libFuzzer with the process arguments; returns its exit status.
    public static func run(
        _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ testOneInput: TestOneInput
    ) -> CInt {
        var argc = argc
        var argv = argv
        return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
    }
}
