import FerryWire
import Foundation
import Testing

@testable import FerryCLI

/// `RecentPeers` (issue 28, 7): what `ferry receive` keeps for `trust add NAME` is bounded, newest first, and only
/// read from a file no one else could have written.
@Suite struct RecentPeersTests {
    static func entry(
        _ byte: UInt8, name: String, at seconds: Double, from address: String? = nil, second: UInt8 = 0
    ) -> RecentPeers.Entry {
        let id = DeviceID(bytes: [byte, second] + [UInt8](repeating: 0, count: DeviceID.length - 2))!
        return RecentPeers.Entry(
            deviceID: id.hex, name: name, code: "123456", address: address ?? "127.0.0.\(byte):1",
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

    /// Review of issue 28, 7: one address with fresh keys (32 of them evicted every other peer) holds at most
    /// `perAddress` entries and never pushes out another address's peer.
    @Test func aStrangerWithFreshKeysEvictsNoOtherPeer() throws {
        let home = try ConfigHome()
        let recent = RecentPeers(environment: home.environment)
        try recent.record(Self.entry(1, name: "carol", at: 0, from: "192.168.1.5:40000"))
        for key in 0..<(RecentPeers.capacity + 8) {
            // Spaced past the interval: only the bound per address holds them back.
            try recent.record(
                Self.entry(
                    2, name: "carol", at: Double(1 + key) * 3600, from: "192.168.1.66:\(1000 + key)",
                    second: UInt8(key)))
        }
        let entries = recent.load()
        #expect(entries.contains { $0.deviceID == Self.entry(1, name: "carol", at: 0).deviceID }, "\(entries)")
        #expect(entries.filter { $0.address?.hasPrefix("192.168.1.66:") == true }.count <= 4, "\(entries)")
    }

    /// A new device from an address is recorded at most once an interval (the same device again is, with its new
    /// code); IPv6 addresses of one /64 count as one address.
    @Test func newDevicesFromOneAddressAreRecordedAtMostOnceAnInterval() throws {
        let home = try ConfigHome()
        let recent = RecentPeers(environment: home.environment)
        try recent.record(Self.entry(1, name: "a", at: 0, from: "[fd00:1:2:3::5]:4000"))
        try recent.record(Self.entry(2, name: "b", at: 1, from: "[fd00:1:2:3:ffff::9]:4001"))
        try recent.record(Self.entry(3, name: "c", at: 2, from: "10.1.1.1:4002"))
        var again = Self.entry(1, name: "a", at: 3, from: "[fd00:1:2:3::5]:4003")
        again.code = "654321"
        try recent.record(again)
        #expect(recent.load().map(\.name) == ["c", "a"])
        #expect(recent.load().last?.code == "654321")
        try recent.record(Self.entry(2, name: "b", at: 3 + RecentPeers.newDeviceInterval, from: "[fd00:1:2:3::9]:1"))
        #expect(recent.load().map(\.name) == ["c", "a", "b"])
    }

    /// Review of issue 28, 7: a FIFO planted where the file goes is not waited on (the open blocked until someone
    /// wrote to it, and `ferry trust add` with it).
    @Test func aFIFOInThePlaceOfTheFileIsNotWaitedOn() throws {
        let home = try ConfigHome()
        let recent = RecentPeers(environment: home.environment)
        try FileManager.default.createDirectory(at: recent.directory, withIntermediateDirectories: true)
        #expect(mkfifo(recent.file.path, 0o600) == 0)
        let done = DispatchSemaphore(value: 0)
        let loaded = Thread {
            _ = recent.load()
            done.signal()
        }
        loaded.start()
        let returned = done.wait(timeout: .now() + 20) == .success
        if !returned {
            // Lets the blocked open return (a writer appeared), so that the test ends.
            let writer = open(recent.file.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            done.wait()
        }
        #expect(returned, "load() blocked on a FIFO")
    }
}
