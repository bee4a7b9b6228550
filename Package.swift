// swift-tools-version: 6.0
import PackageDescription

/// ferry: GKSession-style peer-to-peer sessions and file transfer for Linux.
///
/// Layers, strictly one way: FerryWire (bytes <-> values) -> FerryStateMachines (events -> actions)
/// -> FerrySystem (syscalls, epoll reactor) + FerrySession (drivers) -> FerryCLI (text <-> commands).
let package = Package(
    name: "ferry",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
        .executable(name: "ferry-bench", targets: ["ferry-bench"]),
        .library(name: "FerrySession", targets: ["FerrySession"]),
        .library(name: "FerryTransfer", targets: ["FerryTransfer"]),
        // An app's identity (DeviceIdentity) for SessionConfiguration: docs/LIBRARY.md, Examples/ImageBroadcast.
        .library(name: "FerrySecurity", targets: ["FerrySecurity"]),
        .library(name: "FerryProtocol", targets: ["FerryWire", "FerryStateMachines"]),
    ],
    targets: [
        // C libraries from Debian.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Linux-only headers and GNU calls that Glibc does not export to Swift.
        .target(name: "CFerryLinux"),

        // 1. Wire: pure codecs.
        .target(name: "FerryWire", dependencies: ["CZlib", "CZstd", "COpenSSL"]),
        // 2. State machines: pure, clock injected.
        .target(name: "FerryStateMachines", dependencies: ["FerryWire"]),
        // 3. Drivers: syscalls and the epoll reactor; the session.
        .target(name: "FerrySystem", dependencies: ["CFerryLinux"]),
        .target(name: "FerrySecurity", dependencies: ["COpenSSL", "FerryWire", "FerryStateMachines", "FerrySystem"]),
        // HTTPS client for LocalSend receivers (libcurl in a thread of its own; docs/ARCHITECTURE.md).
        .target(name: "FerryHTTPClient", dependencies: ["CCurl", "COpenSSL", "FerrySecurity", "FerryWire"]),
        .target(
            name: "FerrySession", dependencies: ["FerryWire", "FerryStateMachines", "FerrySystem", "FerrySecurity"]),
        .target(
            name: "FerryTransfer",
            dependencies: ["FerryWire", "FerryStateMachines", "FerrySystem", "FerrySession"]),
        // LocalSend peers (issue 29): the HTTPS server that feeds the receive path and discovery (docs/ARCHITECTURE.md).
        .target(
            name: "FerryLocalSend",
            dependencies: [
                "FerryWire", "FerryStateMachines", "FerrySystem", "FerrySecurity", "FerryTransfer", "FerryHTTPClient",
            ]),
        // 4. CLI.
        .target(
            name: "FerryCLI",
            dependencies: [
                "FerryLocalSend", "FerryTransfer", "FerrySession", "FerrySecurity", "FerryStateMachines", "FerrySystem",
                "FerryWire",
            ]),
        .executableTarget(name: "ferry", dependencies: ["FerryCLI", "FerrySystem"]),
        .executableTarget(
            name: "ferry-bench",
            dependencies: ["FerryTransfer", "FerrySession", "FerrySecurity", "FerrySystem", "FerryTestSupport"]),

        // Test support: processes, network-namespace test bed, fault proxy.
        .target(name: "FerryTestSupport", dependencies: ["FerrySystem", "FerrySecurity", "FerryWire", "FerrySession"]),

        .testTarget(name: "FerryWireTests", dependencies: ["FerryWire", "FerryTestSupport"]),
        .testTarget(name: "FerryStateMachinesTests", dependencies: ["FerryStateMachines", "FerryTestSupport"]),
        .testTarget(name: "FerrySystemTests", dependencies: ["FerrySystem", "FerryTestSupport"]),
        .testTarget(name: "FerrySecurityTests", dependencies: ["FerrySecurity", "FerryTestSupport"]),
        .testTarget(
            name: "FerryHTTPClientTests",
            dependencies: ["FerryHTTPClient", "FerrySecurity", "FerrySystem", "FerryWire", "FerryTestSupport"]),
        .testTarget(name: "FerrySessionTests", dependencies: ["FerrySession", "FerrySecurity", "FerryTestSupport"]),
        .testTarget(name: "FerryTransferTests", dependencies: ["FerryTransfer", "FerryTestSupport"]),
        .testTarget(name: "FerryCLITests", dependencies: ["FerryCLI", "FerrySession", "FerryTransfer", "FerryTestSupport"]),
        .testTarget(
            name: "FerryIntegrationTests",
            dependencies: ["FerryTestSupport", "FerrySystem", "FerryWire", "FerrySecurity"]),
    ]
)
