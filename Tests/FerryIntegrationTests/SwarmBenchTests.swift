import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// `ferry-bench swarm` (issue 12) in small: 4 MiB of photos to 1 receiver and to 2, each host on its own shaped
    /// link. Not a timing assertion: the report has to have its shape (a block per broadcast with time, copies on the
    /// sender's link, every receiver's bytes, CPU; a table; the targets with a verdict), and every receiver must end
    /// with the sender's files, checked by their digests.
    @Suite(.serialized) struct SwarmBenchTests {
        @Test func aSmallSwarmRunReportsEveryBroadcastAndIdenticalFiles() async throws {
            TestBed.removeStale()
            guard try TestBed.requireAvailability() else {
                try Test.cancel("network namespaces unavailable: \(TestBed.isAvailable.reason)")
            }
            let bench = try FerryBinary.locate(named: "ferry-bench")
            let process = try FerryProcess(
                executable: bench.path, arguments: ["swarm", "--receivers", "2", "--mib", "4"],
                environment: ["FERRY_BINARY": try FerryBinary.url.path])
            // SIGTERM first: the bench then stops its own ferry processes and removes its namespaces.
            defer { _ = try? process.terminate(grace: .seconds(30)) }
            let status = try await process.exitStatus(timeout: .seconds(600))
            let output = process.allStdoutLines
            #expect(status == 0, "\(process.capturedOutput())")
            #expect(output.last == "swarm: every broadcast measured", "\(output.suffix(3))")

            for count in [1, 2] {
                let block = Self.block(count, of: output)
                try #require(!block.isEmpty, "no block for \(count) receiver(s) in:\n\(output.joined(separator: "\n"))")
                // "2 receiver(s), direct: 1.2 s, 1.90x the 1-receiver send; sender's link out 8.9 MB = 2.03 copies ..."
                let title = block[0]
                let seconds = Self.number(after: ": ", before: " s,", in: title)
                let copies = Self.number(after: " MB = ", before: " copies", in: title)
                #expect(seconds.map { $0 > 0 } ?? false, "\(title)")
                #expect(copies.map { $0 > 0 } ?? false, "\(title)")
                #expect(title.contains(count == 1 ? "1.00x the 1-receiver send" : "x the 1-receiver send"), "\(title)")
                let incoming = try #require(block.first { $0.hasPrefix("  receivers in  MB: ") }, "\(block)")
                #expect(Self.each(incoming).count == count || count == 1, "\(incoming)")
                #expect(block.contains { $0.hasPrefix("  receivers out MB: ") }, "\(block)")
                #expect(block.contains { $0.hasPrefix("  CPU s: sender ") }, "\(block)")
                #expect(block.contains { $0.hasPrefix("  sender's link busy ") }, "\(block)")
                #expect(
                    block.contains(
                        "  files: \(count) of \(count) receiver(s) hold every file, identical to the source (SHA-256)"),
                    "\(block)")
                #expect(!block.contains { $0.contains("PROBLEM") }, "\(block)")
            }
            let table = output.drop { !$0.hasPrefix("swarm: 4 MiB to each receiver") }
            #expect(table.filter { $0.hasPrefix("  1 ") || $0.hasPrefix("  2 ") }.count == 2, "\(Array(table))")
            let targets = table.filter { $0.hasPrefix("    ") }
            #expect(targets.count == 3, "\(Array(table))")
            for target in targets {
                #expect(target.hasSuffix(" met") || target.hasSuffix(" not met"), "\(target)")
            }
            let identical = try #require(targets.last { $0.contains("every receiver ends with identical files") })
            #expect(identical.hasSuffix(" met") && !identical.hasSuffix(" not met"), "\(identical)")
        }

        /// With a ferry whose `send` has `--no-relay` (here the real one behind a wrapper that lists the flag and
        /// drops it), `--baseline` runs each count twice, passing `--no-relay` to the direct runs only, and prints
        /// targets for both modes.
        @Test func withARelayingFerryBaselinePassesNoRelayToTheDirectRunsOnly() async throws {
            TestBed.removeStale()
            guard try TestBed.requireAvailability() else {
                try Test.cancel("network namespaces unavailable: \(TestBed.isAvailable.reason)")
            }
            let directory = try TemporaryDirectory(prefix: "swarm-wrapper")
            defer { directory.remove() }
            let log = directory.url.appendingPathComponent("arguments.log")
            let wrapper = directory.url.appendingPathComponent("ferry")
            try """
            #!/bin/bash
            printf '%s\\n' "$*" >> '\(log.path)'
            if [[ " $* " == *" send "* && " $* " == *" --help "* ]]; then
                '\(try FerryBinary.url.path)' "$@"
                echo '      --no-relay    Send every chunk directly (a test wrapper: ignored).'
                exit 0
            fi
            arguments=()
            for argument in "$@"; do [[ $argument == --no-relay ]] || arguments+=("$argument"); done
            exec '\(try FerryBinary.url.path)' "${arguments[@]}"

            """.write(to: wrapper, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper.path)
            let bench = try FerryBinary.locate(named: "ferry-bench")
            let process = try FerryProcess(
                executable: bench.path, arguments: ["swarm", "--receivers", "2", "--mib", "1", "--baseline"],
                environment: ["FERRY_BINARY": wrapper.path])
            defer { _ = try? process.terminate(grace: .seconds(30)) }
            let status = try await process.exitStatus(timeout: .seconds(600))
            let output = process.allStdoutLines
            #expect(status == 0, "\(process.capturedOutput())")
            #expect(output.contains("relay: ferry send has --no-relay; modes: direct, relay"), "\(output.prefix(4))")
            for title in [
                "1 receiver(s), direct: ", "1 receiver(s), relay: ", "2 receiver(s), direct: ",
                "2 receiver(s), relay: ",
            ] {
                #expect(output.contains { $0.hasPrefix(title) }, "no line starting \(title)")
            }
            #expect(output.filter { $0.hasPrefix("  targets (issue 12), ") }.count == 2, "\(output)")
            let sends = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").filter {
                $0.contains(" --to ")
            }
            #expect(sends.count == 4, "\(sends)")
            #expect(sends.filter { $0.hasSuffix(" --no-relay") }.count == 2, "\(sends)")
        }

        /// A count the bed cannot hold, or a typo, is a usage error that names the option (exit 64), before any
        /// namespace is made.
        @Test(arguments: [
            (["--receivers", "0,4"], "--receivers takes receiver counts from 1 to 64"),
            (["--mib", "lots"], "--mib must be a whole number from 1 to 4096"),
            (["--no-relay", "--baseline"], "--no-relay and --baseline exclude each other"),
            (["--relay"], "unknown option '--relay'"),
        ])
        func aBadOptionIsAUsageError(arguments: [String], message: String) throws {
            let bench = try FerryBinary.locate(named: "ferry-bench")
            let result = try FerryProcess.run(bench.path, ["swarm"] + arguments)
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("error: " + message), "\(result.stderr)")
            #expect(result.stdout.contains("usage: ferry-bench swarm"), "\(result.stdout)")
        }

        /// The block of the broadcast to `count` receivers: its title line and the indented lines under it.
        static func block(_ count: Int, of output: [String]) -> [String] {
            let start = output.drop { !$0.hasPrefix("\(count) receiver(s), ") }
            guard let title = start.first else { return [] }
            return [title] + start.dropFirst().prefix { $0.hasPrefix("  ") }
        }

        /// The number between `prefix` and `suffix` in `line` (their first occurrences).
        static func number(after prefix: String, before suffix: String, in line: String) -> Double? {
            guard let start = line.range(of: prefix)?.upperBound,
                let end = line.range(of: suffix, range: start..<line.endIndex)?.lowerBound
            else { return nil }
            return Double(line[start..<end])
        }

        /// The per-receiver figures of a "min ..., median ..., max ... (each: a b c)" line.
        static func each(_ line: String) -> [String] {
            guard let open = line.range(of: "(each: ")?.upperBound, let close = line.lastIndex(of: ")") else {
                return []
            }
            return line[open..<close].split(separator: " ").map(String.init)
        }
    }
}
