import Foundation
import FerryTestSupport
import Testing

/// Issue 13, the peer picker as a person meets it on a terminal (tmux): rows aligned whatever the names, an empty
/// Enter that says what to type, and peers chosen by name.
extension IntegrationTests {
    @Suite(.serialized) struct PeerPickerTerminalTests {
        @Test func rowsAlignAnEmptyEnterSaysWhyAndNamesChoose() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("picked.bin", size: 4000, seed: 8)
            let long = harness.inbox.path + "/long"
            let short = harness.inbox.path + "/short"
            let (longReceiver, _) = try harness.receiver("alpha-long-name", into: long)
            let (shortReceiver, _) = try harness.receiver("b", into: short)
            let pane = try TerminalPane(
                ["send", file.path, "--session", harness.session, "--name", "outbox", "--interface", "lo"],
                environment: harness.chat.environment("outbox"), name: "picker")
            defer { pane.close() }
            try pane.waitFor("alpha-long-name")
            let screen = try pane.waitFor("  b\n")
            let rows = screen.split(separator: "\n").filter { $0.hasPrefix("   1) ") || $0.hasPrefix("   2) ") }
            #expect(rows.count == 2, "\(screen)")
            // The name column starts at the same place in both rows, and where the header puts "name".
            let header = try #require(screen.split(separator: "\n").first { $0.hasPrefix("   #  device") })
            let nameColumn = header.distance(from: header.startIndex, to: header.range(of: "name")!.lowerBound)
            for row in rows {
                let name = row.hasSuffix("alpha-long-name") ? "alpha-long-name" : "b"
                let start = row.distance(from: row.startIndex, to: row.range(of: name, options: .backwards)!.lowerBound)
                #expect(start == nameColumn, "\(screen)")
                #expect(row.distance(from: row.startIndex, to: row.range(of: "127.0.0.1:")!.lowerBound) == 17)
            }
            try pane.type("")
            try pane.waitFor("nothing chosen: type a number (1 to 2), a name or all, then Enter; Ctrl-C cancels")
            try pane.type("ALPHA b")
            try pane.waitFor("Does alpha-long-name show")
            try pane.type("y")
            try pane.waitFor("Does b show")
            try pane.type("y")
            let (status, end) = try pane.waitForExit()
            #expect(status == 0, "\(end)")
            #expect(try longReceiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try shortReceiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: long) == ["picked.bin": 4000])
            #expect(try TransferHarness.visibleFiles(in: short) == ["picked.bin": 4000])
        }
    }
}
