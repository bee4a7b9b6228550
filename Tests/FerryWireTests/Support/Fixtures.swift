import Foundation

/// Loads the golden wire fixtures committed under `Fixtures/wire/`.
enum Fixtures {
    /// `Fixtures/wire` of this package, found from this file's path (Tests/FerryWireTests/Support/).
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // FerryWireTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("Fixtures/wire")

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent("\(name).bin")))
    }
}
