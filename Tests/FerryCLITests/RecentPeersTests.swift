import FerryWire
import Foundation
import Testing

@testable import FerryCLI

/// `RecentPeers` (issue 28, 7): what `ferry receive` keeps for `trust add NAME` is bounded, newest first, and only
/// read from a file no one else could have written.
@Suite struct RecentPeersTests {
    static func entry(_ byte: UInt8, name: String, at seconds: Double) -> RecentPeers.Entry {
        let id = DeviceID(bytes: [byte] + [UInt8](repeating: 0, count: DeviceID.length - 1))!
        return RecentPeers.Entry(
            deviceID: id.hex, name: name, code: "123456", address: "127.0.0.1:1",
            at: Date(timeIntervalSince1970: seconds))
    }

    @Test func theFileKeepsTheNewestPeersOnceEachAndFindsThemByNameOrID() throws {
        let home = try ConfigHome()
        let recent = RecentPeers(environment: home.environment)
        for index in 0..<(RecentPeers.capacity + 5) {
            try recent.record(Self.entry(UInt8(index), name: "peer\(index)", at: Double(index)))
        }
        try recent.record(Self.entry(40, name: "carol", at: 100))
        try recent.record(Self.entry(40, name: "carol", at: 200))  // the same device again: one entry, the newest
        let entries = recent.load()
        #expect(entries.count == RecentPeers.capacity)
        #expect(entries.filter { $0.name == "carol" }.map(\.at) == [Date(timeIntervalSince1970: 200)])
        #expect(!entries.contains { $0.name == "peer0" })
        #expect(recent.entries(matching: "CAROL").first?.at == Date(timeIntervalSince1970: 200))
        let carolID = try #require(entries.last?.device)
        #expect(recent.entries(matching: String(carolID.description.prefix(9))).first?.name == "carol")
        #expect(recent.entries(matching: "dave").isEmpty)
    }

    @Test func aFileOthersCanWriteIsIgnored() throws {
        let home = try ConfigHome()
        let recent = RecentPeers(environment: home.environment)
        try recent.record(Self.entry(1, name: "carol", at: 1))
        #expect(recent.entries(matching: "carol").count == 1)
        #expect(chmod(recent.file.path, 0o666) == 0)
        #expect(recent.entries(matching: "carol").isEmpty)
    }
}
