import Foundation

/// Options of `ferry-bench swarm`: how many receivers in each broadcast, the links' rate, how many photos.
///
/// Why a type: the full run (1, 4, 8 and 16 receivers of 64 MiB over 100 Mbit/s) takes minutes; `--receivers 2
/// --mib 4` runs the same code in seconds (for a test), and the parser rejects what it does not know.
struct SwarmOptions: Sendable {
    static let usage = """
        usage: ferry-bench swarm [--receivers N[,N...]] [--rate MBIT] [--mib SIZE] [--no-relay] [--baseline]
          --receivers LIST  receiver counts, one broadcast each (default 1,4,8,16; each 1...64); a broadcast to 1
                            receiver always runs first: the others are measured against it
          --rate MBIT       every host's link, both ways (tc tbf on both veth ends; default 100)
          --mib SIZE        MiB of photos per broadcast (JPEG headers, random bytes, 1-8 MiB each; default 64)
          --no-relay        pass --no-relay to `ferry send` (direct sending), when this ferry has it
          --baseline        with a ferry that relays, run every count twice: with --no-relay, then without
        One network namespace per host on one bridge: host 0 sends, hosts 1...N receive (`ferry receive --accept all`,
        started once); each broadcast is one `ferry send FILES --to HOST:PORT...` from host 0. Per broadcast: the
        time, that time over the 1-receiver send's, the bytes the sender's link carried (veth counters) over the
        payload ("copies"), every receiver's bytes in and out, CPU seconds, and whether every receiver holds the
        same files (SHA-256). Needs root (network namespaces).
        """

    static let defaultCounts = [1, 4, 8, 16]

    /// Receiver counts in the order they run; 1 first.
    var counts = defaultCounts
    var mbit = 100
    var mebibytes = 64
    var noRelay = false
    var baseline = false

    /// Parses the arguments after `swarm`; throws a usage message.
    init(arguments: [String]) throws(UsageError) {
        var index = 0
        func value(_ name: String) throws(UsageError) -> String {
            guard index + 1 < arguments.count else { throw UsageError(message: "\(name) needs a value") }
            index += 1
            return arguments[index]
        }
        func number(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let text = try value(name)
            guard let number = Int(text), range.contains(number) else {
                throw UsageError(
                    message:
                        "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--receivers":
                let text = try value(argument)
                let list = text.split(separator: ",", omittingEmptySubsequences: false).map {
                    Int($0.trimmingCharacters(in: .whitespaces))
                }
                guard !list.isEmpty, list.allSatisfy({ $0.map { (1...64).contains($0) } ?? false }) else {
                    throw UsageError(
                        message: "--receivers takes receiver counts from 1 to 64, comma-separated (e.g. 1,4,8,16), "
                            + "not '\(text)'")
                }
                var counts = [1]
                for count in list.compactMap({ $0 }) where !counts.contains(count) { counts.append(count) }
                self.counts = counts
            case "--rate":
                mbit = try number(argument, 1...10_000)
            case "--mib":
                mebibytes = try number(argument, 1...4096)
            case "--no-relay":
                noRelay = true
            case "--baseline":
                baseline = true
            case "-h", "--help":
                throw UsageError(message: nil)
            default:
                throw UsageError(message: "unknown option '\(argument)'")
            }
            index += 1
        }
        if noRelay, baseline {
            throw UsageError(message: "--no-relay and --baseline exclude each other (--baseline runs both ways)")
        }
    }

    /// Payload bytes of one broadcast (to each receiver).
    var bytes: Int { mebibytes << 20 }
}
