import FerrySystem
import FerryTestSupport
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// StagedReservation: a staged file belongs to one transfer at a time, in this process (a claim) and across
/// processes (an `flock` on the staged file); and `publish` never publishes a staged file that is not, in size, what
/// was verified.
@Suite(.serialized, .timeLimit(.minutes(1))) struct StagedReservationTests {
    static let key = String(repeating: "ab", count: 32)

    /// Another process (util-linux `flock`, holding the lock until its standard input ends) locks the staged file:
    /// this process's transfer cannot lock it, nor open it for writing, until that process lets go.
    @Test func aStagedFileLockedByAnotherProcessIsBusyUntilItLetsGo() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            defer { directory.close() }
            let staged = temporary.path + "/.ferry-staging/" + Self.key
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            holder.arguments = ["-x", staged, "-c", "echo locked; read line"]
            let input = Pipe()
            let output = Pipe()
            holder.standardInput = input
            holder.standardOutput = output
            try Data().write(to: URL(fileURLWithPath: staged))
            try holder.runFenced()
            defer {
                try? input.fileHandleForWriting.close()
                holder.waitUntilExit()
            }
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("locked") {
                let more = output.fileHandleForReading.availableData
                try #require(!more.isEmpty, "flock ended before it locked")
                said.append(more)
            }

            let reservation = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try reservation.lockAcrossProcesses() == false)
            #expect(throws: SystemError.self) { _ = try directory.stagedFile(key: Self.key, holding: reservation) }
            try input.fileHandleForWriting.close()
            holder.waitUntilExit()
            #expect(try reservation.lockAcrossProcesses())
            let (file, _) = try directory.stagedFile(key: Self.key, holding: reservation)
            file.close()
            reservation.release()
        }
    }

    /// In one process a second claim on a key is busy until the first is released; a second `ReceiveDirectory` on
    /// the same directory (what another `ferry receive` has) cannot lock what the first holds.
    @Test func oneTransferAtATimeInThisProcessAndBetweenTwoReceivers() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            let other = try ReceiveDirectory(path: temporary.path)
            defer {
                directory.close()
                other.close()
            }
            let first = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try directory.reserveStaged(key: Self.key) == nil)
            #expect(try first.lockAcrossProcesses())
            let theirs = try #require(try other.reserveStaged(key: Self.key))
            #expect(try theirs.lockAcrossProcesses() == false)
            first.release()
            first.release()  // idempotent: does not drop a later claim
            let again = try #require(try directory.reserveStaged(key: Self.key))
            #expect(try theirs.lockAcrossProcesses())
            #expect(try again.lockAcrossProcesses() == false)
            again.release()
            theirs.release()
            // A stale-file sweep leaves a locked staged file alone.
            let held = try #require(try other.reserveStaged(key: Self.key))
            #expect(try held.lockAcrossProcesses())
            #expect(directory.removeStale(olderThan: .zero, now: Date(timeIntervalSinceNow: 3600)) == 0)
            held.release()
            #expect(directory.removeStale(olderThan: .zero, now: Date(timeIntervalSinceNow: 3600)) == 1)
        }
    }

    /// A staged file cut or extended after it was verified (by something other than its transfer) is not published.
    @Test func aStagedFileOfAnotherSizeThanVerifiedIsNotPublished() async throws {
        try await TemporaryDirectory.with { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            defer { directory.close() }
            let (file, _) = try directory.stagedFile(key: Self.key)
            try file.write([1, 2, 3, 4], at: 0)
            let (intruder, _) = try directory.stagedFile(key: Self.key)
            try intruder.write([5], at: 4)
            intruder.close()
            let error = #expect(throws: SystemError.self) {
                _ = try directory.publish(
                    key: Self.key, components: ["x.bin"], permissions: 0o644, modificationTime: (0, 0), staged: file,
                    size: 4)
            }
            #expect(error?.errno == Errno(rawValue: ESTALE))
            #expect(!FileManager.default.fileExists(atPath: temporary.path + "/x.bin"))
        }
    }
}
