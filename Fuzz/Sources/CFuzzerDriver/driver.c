// Intentionally empty: SwiftPM needs one source file in a C target; the declaration lives in the header and the
// definition in libFuzzer (linked by -sanitize=fuzzer).
