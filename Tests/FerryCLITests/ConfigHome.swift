import FerryWire
import Foundation
import Testing

@testable import FerryCLI

/// A temporary `$XDG_CONFIG_HOME` for one test, removed (with everything in it) when the value goes away, which
/// it does when the test returns or fails.
final class ConfigHome: Sendable {
    let path: String

    /// Creates a fresh, empty config home.
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-trust-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The ferry config directory inside it.
    var ferryDirectory: String { path + "/ferry" }

    var environment: [String: String] { ["XDG_CONFIG_HOME": path, "HOME": path] }

    var store: TrustStore { TrustStore(environment: environment) }

    /// Runs `ferry <arguments>` in-process in this config home.
    func run(_ arguments: [String]) async -> FerryRun {
        let out = CapturingTextSink()
        let err = CapturingTextSink()
        let context = CommandContext(stdout: out, stderr: err, environment: environment)
        let code = await FerryCommand.main(arguments: ["ferry"] + arguments, context: context)
        return FerryRun(code: code, stdout: out.text, stderr: err.text)
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o777
    }
}

/// A device ID whose 32 bytes are `first` followed by `rest`.
func testDeviceID(_ first: [UInt8], rest: UInt8 = 0) -> DeviceID {
    DeviceID(bytes: first + [UInt8](repeating: rest, count: DeviceID.length - first.count))!
}
