import Foundation
import FerryTestSupport
import Testing

/// Examples/ImageBroadcast, the library's example app (docs/LIBRARY.md), built as its own package against this
/// checkout and run twice in one session on loopback: each instance sends its image as `Data` to the other as it
/// joins and prints `received NAME SHA256 from PEER` for the image it receives in memory.
@Suite(.serialized, .timeLimit(.minutes(30))) struct ImageBroadcastTests {
    /// The checkout: three levels above this file (Tests/FerryIntegrationTests/ImageBroadcastTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Builds the example (once: this suite has one test; an up-to-date build is quick) and returns its executable.
    static func build() async throws -> URL {
        let package = root.appendingPathComponent("Examples/ImageBroadcast")
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        let build = try registry.start(
            executable: "/usr/bin/env", arguments: ["swift", "build", "--package-path", package.path])
        let status = try await build.exitStatus(timeout: .seconds(1500))
        try #require(
            status == 0, "swift build of the example failed:\n\(build.capturedOutput(stdoutLines: 80, stderrLines: 80))"
        )
        let binary = package.appendingPathComponent(".build/debug/ImageBroadcast")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "no \(binary.path)")
        return binary
    }

    @Test func twoInstancesEachPrintTheOthersImageWithItsSHA256() async throws {
        let binary = try await Self.build()
        let files = try TemporaryDirectory(prefix: "imagebroadcast")
        defer { files.remove() }
        let imageA = try TestFiles(in: files).jpeg("alpha.jpg", width: 64, height: 48)
        let imageB = try TestFiles(in: files).jpeg("beta.jpg", width: 40, height: 30)
        let shaA = try TestFiles.sha256(ofFile: imageA)
        let shaB = try TestFiles.sha256(ofFile: imageB)
        #expect(shaA != shaB)
        let session = "t-imagebroadcast-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        // Each instance stages what it receives under TMPDIR: the test's directory, removed with it.
        let environment = ["TMPDIR": files.path]
        func start(_ name: String, _ image: URL) throws -> FerryProcess {
            try registry.start(
                executable: binary.path,
                arguments: [
                    "--session", session, "--interface", "lo", "--image", image.path, "--name", name,
                    "--count", "1",
                ],
                environment: environment)
        }
        let alpha = try start("alpha", imageA)
        let beta = try start("beta", imageB)
        #expect(try await alpha.exitStatus(timeout: .seconds(120)) == 0, "\(alpha.capturedOutput())")
        #expect(try await beta.exitStatus(timeout: .seconds(120)) == 0, "\(beta.capturedOutput())")
        #expect(alpha.allStdoutLines == ["received beta.jpg \(shaB) from beta"], "\(alpha.capturedOutput())")
        #expect(beta.allStdoutLines == ["received alpha.jpg \(shaA) from alpha"], "\(beta.capturedOutput())")
        // Nothing left staged: each delivered in memory only.
        let left = try FileManager.default.contentsOfDirectory(atPath: files.path).filter {
            $0.hasPrefix("imagebroadcast-")
        }
        #expect(left.isEmpty, "\(left)")
    }

    /// Ctrl-C (SIGINT) ends a running instance with 130, and SIGTERM (what `timeout`, `kill` and systemd send) with
    /// 143, also while `--count` waits for images that do not come: both used to be ignored there, and the process
    /// ran on. Each one's staging directory is removed on the way out.
    @Test func sigintEndsARunningInstanceWith130AndSigtermWith143() async throws {
        let binary = try await Self.build()
        let files = try TemporaryDirectory(prefix: "imagebroadcast")
        defer { files.remove() }
        let imageA = try TestFiles(in: files).jpeg("alpha.jpg", width: 32, height: 24)
        let imageB = try TestFiles(in: files).jpeg("beta.jpg", width: 24, height: 16)
        let session = "t-imagesignals-\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        func start(_ name: String, _ image: URL) throws -> FerryProcess {
            // --count 2 with one other peer: after the one exchange, each waits for an image that never comes.
            try registry.start(
                executable: binary.path,
                arguments: [
                    "--session", session, "--interface", "lo", "--image", image.path, "--name", name, "--count", "2",
                ],
                environment: ["TMPDIR": files.path])
        }
        let alpha = try start("alpha", imageA)
        let beta = try start("beta", imageB)
        // Running and past the exchange: each printed the other's image.
        _ = try alpha.waitForLine(timeout: .seconds(120)) { $0.hasPrefix("received beta.jpg ") }
        _ = try beta.waitForLine(timeout: .seconds(120)) { $0.hasPrefix("received alpha.jpg ") }
        alpha.signal(SIGINT)
        #expect(try await alpha.exitStatus(timeout: .seconds(60)) == 130, "\(alpha.capturedOutput())")
        beta.signal(SIGTERM)
        #expect(try await beta.exitStatus(timeout: .seconds(60)) == 143, "\(beta.capturedOutput())")
        let left = try FileManager.default.contentsOfDirectory(atPath: files.path).filter {
            $0.hasPrefix("imagebroadcast-")
        }
        #expect(left.isEmpty, "\(left)")
    }
}
