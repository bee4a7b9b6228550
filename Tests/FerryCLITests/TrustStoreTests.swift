import Dispatch
import FerryWire
import Foundation
import Synchronization
import Testing

@testable import FerryCLI

/// The trusted-peers file: what it keeps, how it is written, and how it fails.
@Suite struct TrustStoreTests {
    let alice = testDeviceID([1])
    let bob = testDeviceID([2])
    let noon = Date(timeIntervalSince1970: 1_796_040_000.75)

    @Test func emptyWithoutAFileAndCreatesNothingToRead() async throws {
        let home = try ConfigHome()
        #expect(try home.store.load() == [])
        #expect(try home.store.entry(for: alice) == nil)
        #expect(!FileManager.default.fileExists(atPath: home.ferryDirectory))
    }

    @Test func pinLoadRemoveRoundTrip() async throws {
        let home = try ConfigHome()
        let store = home.store
        #expect(try store.pin(alice, name: "alice", now: noon) == nil)
        #expect(try store.pin(bob, name: "", now: noon) == nil)
        let second = Date(timeIntervalSince1970: 1_796_040_000)
        let pinnedAlice = TrustedPeer(deviceID: alice, name: "alice", added: second)
        #expect(try store.load() == [pinnedAlice, TrustedPeer(deviceID: bob, name: "", added: pinnedAlice.added)])
        #expect(try store.entry(for: alice) == pinnedAlice)
        #expect(try store.entry(named: "ALICE") == pinnedAlice)
        #expect(try store.entries(matching: alice.description.prefix(9).lowercased()) == [pinnedAlice])
        // Pinning again renames and keeps the date it was first pinned.
        #expect(try store.pin(alice, name: "alice-laptop", now: noon + 100) == pinnedAlice)
        #expect(try store.entry(for: alice)?.name == "alice-laptop")
        #expect(try store.entry(for: alice)?.added == pinnedAlice.added)
        #expect(try store.remove(alice)?.deviceID == alice)
        #expect(try store.remove(alice) == nil)
        #expect(try store.load().map(\.deviceID) == [bob])
    }

    @Test func fileIsOneSortedJSONObjectPerLine() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice", now: noon)
        let text = try String(contentsOf: home.store.file, encoding: .utf8)
        #expect(text == "{\"added\":\"2026-11-30T12:00:00Z\",\"deviceID\":\"\(alice.hex)\",\"name\":\"alice\"}\n")
    }

    @Test func fileIs0600InA0700Directory() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice")
        #expect(try ConfigHome.mode(home.ferryDirectory) == 0o700)
        #expect(try ConfigHome.mode(home.store.file.path) == 0o600)
        #expect(try ConfigHome.mode(home.store.lockFile.path) == 0o600)
        // No temporary file is left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: home.ferryDirectory).sorted()
        #expect(names == ["trusted-peers", "trusted-peers.lock"])
    }

    /// A trusted-peers file, or its directory, that other users could write to is refused with the command that
    /// fixes it, never read (a line another user appended would be trusted by a running receiver); so is a
    /// symbolic link in its place. Fixed, the same file reads again.
    @Test func aFileOthersCouldChangeIsRefusedNotRead() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice")
        let path = home.store.file.path
        #expect(chmod(path, 0o666) == 0)
        #expect {
            try home.store.load()
        } throws: { error in
            "\(error)".contains("other users can write") && "\(error)".contains("chmod go-w \(path)")
        }
        #expect(throws: (any Error).self) { try home.store.entry(for: alice) }
        #expect(chmod(path, 0o600) == 0)
        #expect(chmod(home.ferryDirectory, 0o777) == 0)
        #expect {
            try home.store.load()
        } throws: { error in
            "\(error)".contains("chmod 700 \(home.ferryDirectory)")
        }
        #expect(chmod(home.ferryDirectory, 0o700) == 0)
        #expect(try home.store.load().map(\.deviceID) == [alice])
        let real = home.ferryDirectory + "/real-peers"
        #expect(rename(path, real) == 0 && symlink(real, path) == 0)
        #expect {
            try home.store.load()
        } throws: { error in
            "\(error)".contains("symbolic link")
        }
    }

    @Test(arguments: [
        "not json\n",
        "{\"added\":\"2026-11-30T12:00:00Z\",\"deviceID\":\"abcd\",\"name\":\"x\"}\n",
        "{\"added\":\"yesterday\",\"deviceID\":\"\(String(repeating: "ab", count: 32))\",\"name\":\"x\"}\n",
        "{\"added\":\"2026-11-30T12:00:00Z\",\"deviceID\":\"\(String(repeating: "ab", count: 32))\"}\n",
    ])
    func damagedFileIsAnErrorNotAnEmptyList(content: String) async throws {
        let home = try ConfigHome()
        try FileManager.default.createDirectory(atPath: home.ferryDirectory, withIntermediateDirectories: true)
        try Data(content.utf8).write(to: home.store.file)
        let path = home.store.file.path
        let expected = CLIError.failure(
            "\(path) is damaged (line 1: not a trusted peer entry); repair the line, or remove the file to forget"
                + " every trusted peer and pin them again with 'ferry trust add'")
        #expect(throws: expected) { try home.store.load() }
        #expect(throws: expected) { try home.store.pin(alice, name: "alice") }
        // Nothing was written over it.
        #expect(try String(contentsOf: home.store.file, encoding: .utf8) == content)
    }

    @Test func duplicateEntryIsDamage() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice", now: noon)
        let line = try String(contentsOf: home.store.file, encoding: .utf8)
        try Data((line + "\n" + line).utf8).write(to: home.store.file)
        #expect(throws: CLIError.self) { try home.store.load() }
        do {
            _ = try home.store.load()
        } catch let error as CLIError {
            #expect(error.message.contains("line 3: a second entry for \(alice.shortDescription)"))
        }
    }

    @Test func aNameBelongsToOneID() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice")
        let expected = CLIError.failure(
            "'Alice' is pinned to \(alice); remove it first with 'ferry trust remove \(alice.shortDescription)'")
        #expect(throws: expected) { try home.store.pin(bob, name: "Alice") }
        #expect(try home.store.load().map(\.deviceID) == [alice])
        // Unnamed peers do not conflict with each other.
        try home.store.pin(bob, name: "")
        try home.store.pin(testDeviceID([3]), name: "")
        #expect(try home.store.load().count == 3)
        // Names compare as people read them: full-width letters or a zero-width space make no new name, and a
        // name of nothing visible is refused.
        #expect(throws: CLIError.self) { try home.store.pin(testDeviceID([4]), name: "ａｌｉｃｅ") }
        #expect(throws: CLIError.self) { try home.store.pin(testDeviceID([4]), name: "al\u{200B}ice") }
        #expect(throws: CLIError.self) { try home.store.pin(testDeviceID([4]), name: " \u{200B} ") }
    }

    @Test func concurrentPinsFromManyThreadsLoseNothing() async throws {
        let home = try ConfigHome()
        let store = home.store
        let failures = Mutex<[String]>([])
        let count = 24
        // Every thread opens the lock file itself, so flock(2) serialises them as it does two processes.
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                try store.pin(testDeviceID([UInt8(index)], rest: 7), name: "peer-\(index)")
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let names = Set(try store.load().map(\.name))
        #expect(names == Set((0..<count).map { "peer-\($0)" }))
    }

    @Test func trustedPeerCodableRoundTrip() throws {
        let peer = TrustedPeer(deviceID: alice, name: "al\"ice\n", added: Date(timeIntervalSince1970: 1_796_040_000))
        let data = try JSONEncoder().encode(peer)
        #expect(try JSONDecoder().decode(TrustedPeer.self, from: data) == peer)
    }
}
