import FerryTestSupport
import Foundation
import Glibc
import Testing

extension IntegrationTests {
    /// `ferry-bench compare` (issue 11) at `--scale small`: it starts its own baselines (sshd, an rsync daemon, nc,
    /// tar, and, as root, the namespace link) and prints, for every contender of every row, throughput and the CPU
    /// per GiB of both ends, ferry's peak RSS, and a verdict for every target. Not a timing assertion: the figures
    /// only have to be there, as numbers.
    @Suite(.serialized) struct CompareBenchTests {
        /// Each row's contenders, as the table names them.
        static let contenders: [String: [String]] = [
            "1": [
                "ferry", "ferry --rehash", "scp (aes128-gcm, into sshd -i)", "rsync daemon", "nc > file",
                "rsync --fsync [fairness]",
                "nc > file; sync FILE [fairness]",
            ],
            "2": [
                "ferry", "ferry, the same bytes as one file", "scp -r (aes128-gcm, into sshd -i)", "rsync -rt daemon",
                "tar c | nc | tar x",
                "rsync -rt --fsync [fairness]", "tar c | nc | tar x; sync FILES [fairness]",
            ],
            "3": ["ferry, text", "ferry, random"],
            "4": ["ferry --compress auto", "rsync -z (zstd level 3)", "scp -C (aes128-gcm, into sshd -i)"],
            "5": [
                "ferry to 1 receiver", "ferry to 4 receivers", "ferry --rehash to 1 receiver",
                "ferry --rehash to 4 receivers",
            ],
            "6": [
                "ferry send --to NAME (discovery included)", "ferry send --to HOST:PORT",
                "scp (aes128-gcm, into sshd -i)", "nc > file",
            ],
        ]

        @Test func aSmallCompareRunPrintsFiguresForEveryContenderAndAVerdictForEveryTarget() async throws {
            let sshd = FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd")
            guard
                try Requirement.check(
                    "sshd", available: sshd, reason: "sshd is missing (Debian package openssh-server)")
            else {
                try Test.cancel("scp's baseline needs sshd (Debian package openssh-server)")
            }
            // Row 4 needs network namespaces (root); without them it is left out (or, under FERRY_REQUIRE_NETNS=1, fails).
            let rows = try TestBed.requireAvailability() ? ["1", "2", "3", "4", "5", "6"] : ["1", "2", "3", "5", "6"]
            let bench = try FerryBinary.locate(named: "ferry-bench")
            let process = try FerryProcess(
                executable: bench.path,
                arguments: ["compare", "--scale", "small", "--rounds", "1", "--rows", rows.joined(separator: ",")],
                environment: ["FERRY_BINARY": try FerryBinary.url.path])
            // SIGTERM first: the bench then stops its own children (sshd, rsync, ferry) and removes its namespaces.
            defer { _ = try? process.terminate(grace: .seconds(30)) }
            let status = try await process.exitStatus(timeout: .seconds(1200))
            let output = process.allStdoutLines
            #expect(status == 0, "\(process.capturedOutput())")
            #expect(output.last == "compare: every contender measured", "\(output.suffix(3))")

            for row in rows {
                let section = Self.section(row, of: output)
                try #require(!section.isEmpty, "no table for row \(row) in:\n\(output.joined(separator: "\n"))")
                for name in Self.contenders[row] ?? [] {
                    let line = section.first { $0.hasPrefix("  " + name + " ") }
                    let figures = try #require(
                        line.map { Self.figures($0, after: name) }, "row \(row): no line for \(name) in:\n\(section)")
                    if row == "6" {  // milliseconds, and the sender's CPU milliseconds: two positive numbers
                        #expect(
                            figures.count >= 2 && figures.prefix(2).allSatisfy { Double($0).map { $0 > 0 } ?? false },
                            "row \(row), \(name): \(line ?? "")")
                        continue
                    }
                    // MB/s, CPU s/GiB of the sender, of the receiver, of both: four positive numbers.
                    #expect(
                        figures.count >= 4 && figures.prefix(4).allSatisfy { Double($0).map { $0 > 0 } ?? false },
                        "row \(row), \(name): \(line ?? "")")
                    if name.hasPrefix("ferry") {  // peak RSS of sender and receiver: "12.3 / 14.5 MiB"
                        #expect(
                            figures.count >= 8 && Double(figures[4]) != nil && figures[5] == "/"
                                && Double(figures[6]) != nil && figures[7] == "MiB",
                            "row \(row), \(name): \(line ?? "")")
                    }
                }
                let targets = section.drop { $0 != "  targets (issues 11 and 27):" }.dropFirst()
                #expect(!targets.isEmpty, "row \(row): no targets in:\n\(section)")
                for target in targets {
                    #expect(target.hasSuffix(" met") || target.hasSuffix(" not met"), "row \(row): \(target)")
                }
            }
        }

        /// The lines of row `row`'s table, from its title to the next row's.
        static func section(_ row: String, of output: [String]) -> [String] {
            Array(output.drop { !$0.hasPrefix("row \(row): ") }.prefix { !$0.isEmpty })
        }

        /// The whitespace-separated fields after the contender's name.
        static func figures(_ line: String, after name: String) -> [String] {
            line.dropFirst(2 + name.count).split(separator: " ").map(String.init)
        }
    }
}
