import FerryTestSupport
import Foundation
import Testing

@testable import FerryCLI

/// docs/EVENTS.md names every `--json` event of every command: the registry of events in the code
/// (`JSONEvents.all`) and the document's headings are the same sets, both ways, and no code writes an `"event"` key
/// except through the registry.
@Suite struct JSONEventTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func everyEventOfTheCodeIsDocumentedAndEveryDocumentedEventExists() throws {
        let document = try EventsDocument.load(besides: #filePath)
        var code: Set<String> = []
        for (command, events) in JSONEvents.all {
            for event in events { code.insert("\(command): \(event)") }
        }
        var documented: Set<String> = []
        for (command, events) in document.order {
            for event in events { documented.insert("\(command): \(event)") }
        }
        #expect(
            code.subtracting(documented).sorted() == [],
            "events the code prints that docs/EVENTS.md does not document")
        #expect(
            documented.subtracting(code).sorted() == [],
            "events docs/EVENTS.md documents that the code no longer has (JSONEvent.swift)")
        #expect(!code.isEmpty)
    }

    @Test func everyDocumentedEventHasFields() throws {
        let document = try EventsDocument.load(besides: #filePath)
        for (command, events) in document.commands {
            for (event, fields) in events {
                #expect(!fields.isEmpty, "\(command): \(event) has no field table in docs/EVENTS.md")
            }
        }
    }

    /// The registry is the only way to write an event: an `"event"` key written anywhere else in the CLI's sources
    /// could print an event nobody checks against the document.
    @Test func noSourceWritesTheEventKeyButJSONLine() throws {
        let sources = Self.packageRoot.appendingPathComponent("Sources/FerryCLI")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
        var offenders: [String] = []
        for file in files where file.hasSuffix(".swift") && file != "Output/JSONLine.swift" {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("//") { continue }
                if trimmed.contains("\"event\": ") || trimmed.contains("(\"event\"") {
                    offenders.append("\(file):\(number + 1): \(trimmed)")
                }
            }
        }
        #expect(offenders == [], "write events with JSONLine(event:) and a case of JSONEvent.swift")
    }

    /// `id --json` and `trust list --json` share their shape: the same first keys, after their own `event`.
    @Test func identityAndTrustedPeerShareTheirFirstKeys() async throws {
        let home = try ConfigHome()
        let id = await home.run(["--name", "zoe", "id", "--json"])
        let deviceID = try #require(Self.object(id.stdout)["deviceID"] as? String, "\(id.stdout)")
        _ = await home.run(["trust", "add", deviceID, "--name", "zoe"])
        let list = await home.run(["trust", "list", "--json"])
        let identityKeys = Self.keys(id.stdout)
        let peerKeys = Self.keys(list.stdout)
        #expect(identityKeys.prefix(4) == ["event", "deviceID", "hex", "name"], "\(id.stdout)")
        #expect(peerKeys.prefix(4) == ["event", "deviceID", "hex", "name"], "\(list.stdout)")
        #expect(Self.object(id.stdout)["event"] as? String == "identity")
        #expect(Self.object(list.stdout)["event"] as? String == "trustedPeer")
        #expect(Self.object(list.stdout)["hex"] as? String == Self.object(id.stdout)["hex"] as? String)
        let document = try EventsDocument.load(besides: #filePath)
        #expect(document.undocumented(in: [id.stdout], command: JSONEvents.Id.command) == [])
        #expect(document.undocumented(in: [list.stdout], command: JSONEvents.TrustList.command) == [])
    }

    /// The keys of the first line of `text`, in order.
    static func keys(_ text: String) -> [String] {
        EventsDocument.keys(of: text.split(separator: "\n").first.map(String.init) ?? "")
    }

    static func object(_ text: String) -> [String: Any] {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }
}
