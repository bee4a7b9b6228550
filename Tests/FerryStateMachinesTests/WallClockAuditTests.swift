import Foundation
import Testing

/// Correctness never depends on wall-clock time: no source file reads the wall clock, except the few uses on the
/// allow-list below, each with the reason it is harmless.
///
/// Why: the wall clock jumps (NTP, a user setting the date, a laptop resuming). A timeout, a deadline, a rate or
/// an ordering measured with it can fire at once, never, or go backwards. ferry measures time with
/// `ContinuousClock` (CLOCK_BOOTTIME) or CLOCK_MONOTONIC, passed in as a clock where it matters. This test reads
/// every file under `Sources/` and fails when a wall-clock API appears outside the allow-list, so a new use has to
/// be argued for here.
@Suite struct WallClockAuditTests {
    /// Spellings that read the wall clock (Swift, Foundation, Dispatch, C and OpenSSL).
    static let wallClockAPIs = [
        "Date()", "Date.now", "Date(timeIntervalSinceNow", "timeIntervalSinceNow", "CFAbsoluteTimeGetCurrent",
        "DispatchWallTime", "wallDeadline", "gettimeofday", "CLOCK_REALTIME", "time(nil)", "time(NULL)",
        "time(0)", "ftime(", "X509_gmtime_adj", "X509_time_adj", "X509_cmp_current_time",
    ]

    /// One allowed use: the file (relative to `Sources/`), the API, and why it cannot break correctness.
    struct Allowed {
        var file: String
        var api: String
        var why: String
    }

    static let allowed = [
        Allowed(
            file: "FerryTransfer/Receiving/ReceiveDirectory+Leftovers.swift", api: "Date()",
            why: "removeStaged's default `now`: the 7-day expiry compares staged files' modification times (wall-clock "
                + "file timestamps) with now; a wrong clock expires a leftover early or late (a resume then starts "
                + "over), never one a transfer holds (those are locked and skipped)"),
        Allowed(
            file: "FerryLocalSend/LocalSendSessions.swift", api: "Date()",
            why: "a LocalSend file's modification time when the sender gives none (the moment it arrived), set on "
                + "the published file as a ferry sender's mtime is; no decision, bound or timeout reads it"),
        Allowed(
            file: "FerryTransfer/Receiving/ReceiveDirectory.swift", api: "Date()",
            why: "removeStale compares staged files' modification times (themselves wall-clock file timestamps) with "
                + "now, to delete leftovers a week old; a wrong clock removes a leftover early or late, never touches "
                + "a transfer in progress (a live transfer's staged file is open and rewritten)"),
        Allowed(
            file: "FerrySecurity/SelfSignedCertificate.swift", api: "X509_gmtime_adj",
            why: "ferry's own self-signed certificate's notBefore (DeviceIdentity, `.fromNow`), written once when the "
                + "identity is created; peers accept any certificate and compare its SHA-256 "
                + "(ferry_accept_any_certificate), never its dates; the LocalSend certificate has fixed dates"),
        Allowed(
            file: "FerrySecurity/SelfSignedCertificate.swift", api: "X509_time_adj",
            why: "the certificate's notAfter (creation + 100 years), for the same reason never checked by a peer"),
        Allowed(
            file: "ferry-bench/CompareBenchmark.swift", api: "Date()",
            why: "how long ago a bench run removed row 2's copies (a marker file's modification time, itself wall "
                + "clock), for a note in the report's header; never a timing figure or a wait"),
        Allowed(
            file: "FerryCLI/Runners/RecentPeers.swift", api: "Date()",
            why: "when a peer's link reached its hello, stored for `trust add NAME` to show the person; never compared "
                + "or waited on"),
        Allowed(
            file: "FerryCLI/Runners/TrustStore.swift", api: "Date()",
            why: "the date a peer was pinned, stored for `ferry trust list` to show; never compared or waited on"),
        Allowed(
            file: "FerryTransfer/Sending/Payload.swift", api: "Date()",
            why: "a payload's modification time in its offer (the time it was offered, as a file's would be): file "
                + "metadata the receiver sets on a published file and puts in the resume key, never a deadline"),
        Allowed(
            file: "FerryTransfer/Sending/PreparedFile.swift", api: "Date()",
            why: "PreparedFile.statedAt, compared only with the file's own change and modification times (wall-clock "
                + "file timestamps from the same clock) to decide whether its digests may be kept (DigestCache); a "
                + "clock set back keeps nothing, and a kept digest that is wrong is refused by the receiver (a "
                + "failed file, never a wrong one)"),
        Allowed(
            file: "FerryTransfer/Sending/DigestCache.swift", api: "Date(timeIntervalSinceNow",
            why: "a temporary entry a crashed process left is removed once its modification time is a minute old; a "
                + "wrong clock removes one early (that store's rename fails: nothing kept) or late"),
        Allowed(
            file: "FerryTransfer/Sending/DigestCache.swift", api: "timeIntervalSinceNow",
            why: "the same use (the spelling inside Date(timeIntervalSinceNow:))"),
    ]

    static var sourcesDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
    }

    /// Every use of a wall-clock API in `Sources/`, as "file: api", comments skipped.
    static func uses() throws -> [String] {
        let root = sourcesDirectory.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        for case let relative as String in walker
        where [".swift", ".c", ".h"].contains(where: { relative.hasSuffix($0) }) {
            let text = try String(contentsOfFile: root + "/" + relative, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let code = line.drop { $0 == " " }
                if code.hasPrefix("//") || code.hasPrefix("*") || code.hasPrefix("/*") { continue }
                for api in wallClockAPIs where code.contains(api) {
                    found.append("\(relative): \(api)")
                }
            }
        }
        return found
    }

    @Test func noWallClockOutsideTheAllowList() throws {
        let found = try Self.uses()
        let unexplained = found.filter { use in
            !Self.allowed.contains { use == "\($0.file): \($0.api)" }
        }
        #expect(unexplained.isEmpty, "wall-clock API outside the allow-list (use ContinuousClock): \(unexplained)")
    }

    @Test func theAuditSeesTheSourcesAndEveryAllowedUseStillExists() throws {
        let found = try Self.uses()
        for entry in Self.allowed {
            #expect(found.contains("\(entry.file): \(entry.api)"), "stale allow-list entry \(entry.file)")
        }
    }
}
