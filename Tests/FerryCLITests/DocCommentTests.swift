import Foundation
import Testing

/// Every public declaration of the library modules has a doc comment (`///` on the line before it, above its
/// attributes): what an app developer reads in their editor is all the documentation the modules have besides
/// docs/LIBRARY.md.
///
/// The check reads the sources: a line that declares something `public` or `open` (after any attributes on it)
/// must follow a `///` line or the end of a `/** */` block, skipping attribute lines (`@inlinable`). Extensions are
/// not declarations of their own. Enum cases of a public enum inherit its access without the keyword, so they are
/// not checked here.
@Suite struct DocCommentTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Modules whose every public declaration must be documented.
    static let enforced = [
        "FerryWire", "FerryStateMachines", "FerrySystem", "FerrySecurity", "FerrySession", "FerryTransfer", "FerryCLI",
        "FerryLocalSend",
    ]

    /// `file:line: declaration` for each public declaration of `module` without a doc comment.
    static func undocumented(in module: String) throws -> [String] {
        let directory = packageRoot.appendingPathComponent("Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(atPath: directory.path)).compactMap { $0 as? String }
        var offenders: [String] = []
        for file in files.sorted() where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            for (index, line) in lines.enumerated() where isPublicDeclaration(line) {
                var previous = index - 1
                while previous >= 0, lines[previous].hasPrefix("@") { previous -= 1 }
                let documented = previous >= 0 && (lines[previous].hasPrefix("///") || lines[previous].hasSuffix("*/"))
                if !documented { offenders.append("\(module)/\(file):\(index + 1): \(line)") }
            }
        }
        return offenders
    }

    /// Whether `line` (trimmed) declares something public: `public` or `open` after any attributes, and not an
    /// extension or an import.
    static func isPublicDeclaration(_ line: String) -> Bool {
        var words = line.split(separator: " ", omittingEmptySubsequences: true)[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
        guard let access = words.first, access == "public" || access == "open" || access.hasPrefix("public(")
        else { return false }
        let kind = words.dropFirst().first ?? ""
        return kind != "extension" && kind != "import"
    }

    @Test(arguments: enforced) func everyPublicDeclarationHasADocComment(module: String) throws {
        let offenders = try Self.undocumented(in: module)
        #expect(offenders == [], "public declarations without a /// doc comment:\n\(offenders.joined(separator: "\n"))")
    }

    @Test func theCheckSeesDeclarationsBehindAttributesAndSkipsExtensions() {
        #expect(Self.isPublicDeclaration("public func f()"))
        #expect(Self.isPublicDeclaration("@inlinable public static func f()"))
        #expect(Self.isPublicDeclaration("public private(set) var x = 0"))
        #expect(Self.isPublicDeclaration("open class C {"))
        #expect(!Self.isPublicDeclaration("public extension X {"))
        #expect(!Self.isPublicDeclaration("extension X: Equatable {"))
        #expect(!Self.isPublicDeclaration("func publicThing()"))
        #expect(!Self.isPublicDeclaration("/// public func f()"))
    }
}
