// swift-tools-version: 6.0
import PackageDescription

/// libFuzzer targets for ferry's peer-input decoders (docs/ARCHITECTURE.md, "Fuzzing"; issue 4, promise 6).
///
/// A package of its own so the main package never needs the fuzzer runtime: every target defines only
/// `LLVMFuzzerTestOneInput` and a `<Target>_main` that starts libFuzzer, so it links only with
/// `-Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library` (run them with `scripts/fuzz`).
let package = Package(
    name: "ferry-fuzz",
    dependencies: [
        .package(name: "ferry", path: "..")
    ],
    targets: [
        // Input cursor, libFuzzer start-up and the invariants the targets share.
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzerDriver", .product(name: "FerryProtocol", package: "ferry")]
        ),
        // Declares libFuzzer's LLVMFuzzerRunDriver (defined by the runtime that -sanitize=fuzzer links).
        .target(name: "CFuzzerDriver"),
        fuzzTarget("FuzzFrameDecoder"),
        fuzzTarget("FuzzBeacon"),
        fuzzTarget("FuzzOffer"),
        fuzzTarget("FuzzNameValidator"),
        fuzzTarget("FuzzInflate"),
        fuzzTarget("FuzzTransferFrames"),
        fuzzTarget("FuzzDatagram"),
        fuzzTarget("FuzzHTTPRequest"),
        fuzzTarget("FuzzLocalSendJSON"),
    ]
)

/// One libFuzzer executable over the pure protocol layers (FerryWire, FerryStateMachines).
func fuzzTarget(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", .product(name: "FerryProtocol", package: "ferry")]
    )
}
