import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// `ferry peers` as a person reads it: a header line first, then one row per peer that says in plain words what
    /// the peer does with connections (a chat in `--mode server` accepts them, one in the default mode accepts and
    /// makes them), never the mode's name (`server`).
    @Suite struct PeersTableTests {
        static let header = "NAME                  DEVICE     ADDRESS                 STATE         CONNECTIONS"

        @Test func peersHasAHeaderAndSaysInPlainWordsWhoAcceptsConnections() async throws {
            let harness = try ChatHarness()
            _ = try harness.chat("srv", ["--mode", "server"])
            _ = try harness.chat("both")
            let peers = try harness.registry.startFerry(
                ["peers", "--timeout", "0", "--session", harness.session, "--interface", "lo"],
                environment: harness.environment("peers"))
            #expect(try peers.nextLine(timeout: .seconds(60)) == Self.header, "\(peers.capturedOutput())")
            var rows: [String: String] = [:]
            while rows.count < 2 {
                let line = try peers.nextLine(timeout: .seconds(60))
                rows[String(line.prefix { $0 != " " })] = line
            }
            let server = try #require(rows["srv"], "\(rows)")
            let both = try #require(rows["both"], "\(rows)")
            #expect(server.hasSuffix("  available     accepts connections"), "\(server)")
            #expect(both.hasSuffix("  available     accepts and makes connections"), "\(both)")
            // The columns line up under the header.
            for row in [server, both] {
                for column in ["DEVICE", "ADDRESS", "STATE", "CONNECTIONS"] {
                    let offset = Self.header.distance(
                        from: Self.header.startIndex, to: Self.header.range(of: column)!.lowerBound)
                    let before = row.index(row.startIndex, offsetBy: offset - 1)
                    #expect(row[before] == " " && row[row.index(after: before)] != " ", "\(column) in \(row)")
                }
            }
            try peers.terminate()
        }
    }
}
