// swift-tools-version: 6.0
import PackageDescription

/// An example app of ferry's Swift library (docs/LIBRARY.md): every peer of a session sends its image, as `Data`, to
/// every other peer as it joins, and prints each image it receives in memory. ferry is a dependency by path, as an
/// app in a checkout of it (or beside it) would use it.
let package = Package(
    name: "ImageBroadcast",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "ferry", path: "../..")],
    targets: [
        .executableTarget(
            name: "ImageBroadcast",
            dependencies: [
                .product(name: "FerrySession", package: "ferry"),
                .product(name: "FerryTransfer", package: "ferry"),
                .product(name: "FerrySecurity", package: "ferry"),
                .product(name: "FerryProtocol", package: "ferry"),
            ])
    ]
)
