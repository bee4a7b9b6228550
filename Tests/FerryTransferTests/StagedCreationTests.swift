import FerrySystem
import FerryTestSupport
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// Staged files created ahead (`StagedReservation.lockAcrossProcesses(creating:)`): created without a name and linked
/// (O_TMPFILE), locked as any staged file, written through the descriptor they were created with, and that
/// descriptor closed when the reservation ends without them; by name where O_TMPFILE is not available.
@Suite(.serialized, .timeLimit(.minutes(1))) struct StagedCreationTests {
    static let key = String(repeating: "cd", count: 32)

    /// Descriptors of this process open on the file `path` names (same device and inode: a descriptor of a file
    /// created without a name shows no path in /proc), with whether each is open for writing (/proc/self/fdinfo).
    static func descriptors(on path: String) -> [(fd: Int32, writable: Bool)] {
        var named = stat()
        guard stat(path, &named) == 0 else { return [] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap { entry -> (fd: Int32, writable: Bool)? in
            var opened = stat()
            guard let fd = Int32(entry), stat("/proc/self/fd/\(entry)", &opened) == 0, opened.st_dev == named.st_dev,
                opened.st_ino == named.st_ino,
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(entry)", encoding: .utf8),
                let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                let value = Int32(flags.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
            else { return nil }
            return (fd, value & O_ACCMODE != O_RDONLY)
        }
    }

    /// Created ahead: the staged name holds an empty file (mode 0600) that this transfer holds locked, another
    /// receiver on the directory cannot lock, and whose data is written through the descriptor kept from its
    /// creation (no second open): the bytes land in the named file, which is the locked one.
    @Test(arguments: [false, true]) func aFileStagedAheadIsLockedAndWrittenThroughItsOwnDescriptor(byName: Bool)
        async throws
    {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            let other = try ReceiveDirectory(path: temporary.path)
            defer {
                directory.close()
                other.close()
            }
            if byName { directory.linkedCreationUnsupported.store(true, ordering: .relaxed) }
            let staged = temporary.path + "/.ferry-staging/" + Self.key
            let reservation = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try reservation.lockAcrossProcesses(creating: true))
            let attributes = try FileManager.default.attributesOfItem(atPath: staged)
            #expect(attributes[.size] as? UInt64 == 0)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0)
            // By name nothing is kept open for writing ahead; created without a name, exactly one descriptor is.
            #expect(Self.descriptors(on: staged).filter(\.writable).count == (byName ? 0 : 1))

            let theirs = try #require(try other.reserveStaged(key: Self.key))
            #expect(try theirs.lockAcrossProcesses(creating: true) == false)
            theirs.release()

            let (file, existing) = try directory.stagedFile(key: Self.key, holding: reservation)
            #expect(existing == 0)
            #expect(reservation.takeWritable() == nil)  // taken by stagedFile, whichever way it was opened
            #expect(Self.descriptors(on: staged).filter(\.writable).count == 1)
            try file.write(Array("staged ahead".utf8), at: 0)
            #expect(try String(contentsOfFile: staged, encoding: .utf8) == "staged ahead")
            let named = try #require(try directory.staging.status(of: Self.key))
            #expect(reservation.isLockedFile(named))
            #expect(reservation.isLockedFile(try file.status()))
            file.close()
            reservation.release()
            #expect(Self.descriptors(on: staged).isEmpty)
        }
    }

    /// A file created ahead that never comes (the transfer ends first): releasing its reservation closes the
    /// writable descriptor kept from its creation with the lock.
    @Test func aFileStagedAheadThatNeverCameLeavesNoDescriptorOpen() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            defer { directory.close() }
            let staged = temporary.path + "/.ferry-staging/" + Self.key
            let reservation = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try reservation.lockAcrossProcesses(creating: true))
            let open = Self.descriptors(on: staged)
            #expect(open.count == 2)  // the lock's (read-only) and the creation's (for writing)
            #expect(open.filter(\.writable).count == 1)
            reservation.release()
            #expect(Self.descriptors(on: staged).isEmpty)
            try FileManager.default.removeItem(atPath: staged)
        }
    }

    /// Releasing with `removingEmpty` removes the empty file created ahead, in the same step as the release: a
    /// creation ahead either came before it (its file goes) or finds the reservation released (nothing is created).
    /// A file with bytes stays. (The interleaving itself is closed by the reservation's lock, not exercised here.)
    @Test func aReleaseThatRemovesAnEmptyFileStagedAheadLeavesNothing() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            defer { directory.close() }
            let staged = temporary.path + "/.ferry-staging/" + Self.key
            let created = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try created.lockAcrossProcesses(creating: true))
            created.release(removingEmpty: true)
            #expect(!FileManager.default.fileExists(atPath: staged), "the empty file created ahead went")

            let late = try #require(try directory.reserveStaged(key: Self.key))
            late.release(removingEmpty: true)
            #expect(throws: SystemError.self) { try late.lockAcrossProcesses(creating: true) }
            #expect(!FileManager.default.fileExists(atPath: staged), "a creation after the release made nothing")

            let written = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try written.lockAcrossProcesses(creating: true))
            let (file, _) = try directory.stagedFile(key: Self.key, holding: written)
            try file.write(Array("x".utf8), at: 0)
            file.close()
            written.release(removingEmpty: true)
            #expect(try String(contentsOfFile: staged, encoding: .utf8) == "x", "a file with bytes stays")
        }
    }

    /// A staged file already there (a resumed prefix) is locked as it is, never replaced by a new one: its bytes
    /// stay, and it is opened for writing by name.
    @Test func anExistingStagedFileIsLockedAsItIs() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            defer { directory.close() }
            let staged = temporary.path + "/.ferry-staging/" + Self.key
            try Data("prefix".utf8).write(to: URL(fileURLWithPath: staged))
            let reservation = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try reservation.lockAcrossProcesses(creating: true))
            #expect(reservation.takeWritable() == nil)
            let (file, existing) = try directory.stagedFile(key: Self.key, holding: reservation)
            #expect(existing == 6)
            file.close()
            reservation.release()
            #expect(try String(contentsOfFile: staged, encoding: .utf8) == "prefix")
        }
    }
}
