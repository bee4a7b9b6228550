import FerryTestSupport
import Foundation
import Testing

/// Every ```swift block of docs/*.md compiles against the modules of this build, so that an example of the
/// documentation cannot fall behind the API it shows (LIBRARY.md's once switched over `engine.events` without two
/// events added later, and did not compile).
///
/// How: a block that starts with `// swift-tools-version` is a package manifest; it is written into a temporary
/// package (its `path:` dependency pointed at this checkout) whose graph `swift package show-dependencies` loads, so
/// that a product it names must exist. Every other block is a complete Swift file (its imports included) and is
/// type-checked by `swiftc -typecheck -swift-version 6` against the modules this test was built with (the
/// `Modules` directory beside the test bundle) and the C modules' maps: the same compiler and modules an app of
/// `swift build` gets, in seconds per block instead of a build of its own.
@Suite(.timeLimit(.minutes(10))) struct DocumentationCodeTests {
    /// The checkout: three levels above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// One ```swift block: the document, the line of its opening fence, its text.
    struct Block: CustomStringConvertible, Sendable {
        var file: String
        var line: Int
        var code: String
        var description: String { "\(file):\(line)" }
        /// A package manifest, or a piece of one (a reader copies it into a Package.swift).
        var isManifest: Bool { code.hasPrefix("// swift-tools-version") || code.contains(".package(") }
    }

    /// The ```swift blocks of every docs/*.md, in file and line order.
    static func blocks() throws -> [Block] {
        let docs = root.appendingPathComponent("docs")
        let names = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }
            .sorted()
        var blocks: [Block] = []
        for name in names {
            let text = try String(contentsOf: docs.appendingPathComponent(name), encoding: .utf8)
            var current: Block?
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if var block = current {
                    if line.trimmingCharacters(in: .whitespaces) == "```" {
                        blocks.append(block)
                        current = nil
                    } else {
                        block.code += line + "\n"
                        current = block
                    }
                } else if line.trimmingCharacters(in: .whitespaces) == "```swift" {
                    current = Block(file: "docs/" + name, line: index + 1, code: "")
                }
            }
            #expect(current == nil, "docs/\(name): a ```swift block is not closed")
        }
        return blocks
    }

    /// The build's directory (`.build/<triple>/debug`): where the running test bundle is.
    static func buildDirectory() throws -> URL {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return URL(fileURLWithPath: executable).deletingLastPathComponent()
    }

    /// The `swiftc` that built this test, as the build's manifest names it (`.build/debug.yaml` for the build
    /// directory `.build/<triple>/debug`): the compiler of the build, not whichever is first on PATH.
    static func compiler(of build: URL) throws -> String {
        let manifest = build.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(build.lastPathComponent + ".yaml")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        let pattern = try #require(try? Regex(#""(/[^"]*/swiftc)""#))
        let match = try #require(text.firstMatch(of: pattern), "no swiftc named in \(manifest.path)")
        return String(try #require(match.output[1].substring))
    }

    /// The clang arguments that make the package's C modules importable, found in Sources/ rather than listed: a
    /// system-library target's own `module.modulemap`, and for a C target (one with `include/`) the map the build
    /// generated for it and its headers.
    static func cModuleArguments(build: URL) throws -> [String] {
        let sources = root.appendingPathComponent("Sources")
        var arguments: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let target = sources.appendingPathComponent(name)
            let systemMap = target.appendingPathComponent("module.modulemap")
            let include = target.appendingPathComponent("include")
            if FileManager.default.fileExists(atPath: systemMap.path) {
                arguments += ["-Xcc", "-fmodule-map-file=\(systemMap.path)"]
            } else if FileManager.default.fileExists(atPath: include.path) {
                let map = build.appendingPathComponent("\(name).build/module.modulemap")
                try #require(FileManager.default.fileExists(atPath: map.path), "no \(map.path) for C target \(name)")
                arguments += ["-Xcc", "-fmodule-map-file=\(map.path)", "-Xcc", "-I\(include.path)"]
            }
        }
        return arguments
    }

    /// Runs `arguments` in `directory`; its exit status and everything it printed.
    static func run(_ arguments: [String], in directory: URL) async throws -> (status: Int32, output: String) {
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        let process = try registry.start(
            executable: "/usr/bin/env", arguments: ["-C", directory.path] + arguments)
        let status = try await process.exitStatus(timeout: .seconds(300))
        return (status, (process.allStdoutLines + process.allStderrLines).joined(separator: "\n"))
    }

    @Test func everySwiftBlockOfTheDocsCompiles() async throws {
        let blocks = try Self.blocks()
        try #require(!blocks.isEmpty, "no ```swift block in docs/*.md")
        let build = try Self.buildDirectory()
        let modules = build.appendingPathComponent("Modules")
        try #require(FileManager.default.fileExists(atPath: modules.path), "no \(modules.path)")
        let compiler = try Self.compiler(of: build)
        let cModules = try Self.cModuleArguments(build: build)
        try await TemporaryDirectory.with(prefix: "doc-blocks") { directory in
            for (index, block) in blocks.enumerated() {
                let place = directory.url.appendingPathComponent("block\(index)")
                try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
                let result: (status: Int32, output: String)
                if block.isManifest {
                    guard block.code.hasPrefix("// swift-tools-version") else {
                        Issue.record(
                            "\(block): a piece of a manifest; show a whole Package.swift, which can be checked")
                        continue
                    }
                    // The dependency by path, pointed at this checkout; one source file for the target it declares.
                    let manifest = block.code.replacingOccurrences(
                        of: #"path: "../ferry""#, with: "path: \"\(Self.root.path)\"")
                    #expect(manifest != block.code, "\(block): the manifest has no path: \"../ferry\" dependency")
                    try manifest.write(
                        to: place.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
                    let sources = place.appendingPathComponent("Sources/MyApp")
                    try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
                    try "print(1)\n".write(
                        to: sources.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
                    result = try await Self.run(
                        ["swift", "package", "--disable-dependency-cache", "show-dependencies"], in: place)
                } else {
                    let file = place.appendingPathComponent("main.swift")
                    try block.code.write(to: file, atomically: true, encoding: .utf8)
                    let arguments =
                        [compiler, "-typecheck", "-swift-version", "6", "-I", modules.path]
                        + cModules + [file.path]
                    result = try await Self.run(arguments, in: place)
                }
                #expect(result.status == 0, "\(block) does not compile:\n\(result.output)")
            }
        }
    }
}
