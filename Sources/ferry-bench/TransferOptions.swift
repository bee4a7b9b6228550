import Foundation

/// Options of `ferry-bench transfer`: which rows, how large, how often.
///
/// Why a type: the full run moves tens of gigabytes; `--scale 0.05 --rows a,c` makes a quick check of
/// the same code, and the parser rejects what it does not know instead of running the wrong thing.
struct TransferOptions: Sendable {
    static let allRows = ["a", "b", "c", "d", "e", "f"]
    static let usage = """
        usage: ferry-bench transfer [--scale F] [--rows a,b,c,d,e,f] [--repeat N]
          --scale F    multiply every file size by F (default 1.0; 0.05 makes a quick run)
          --rows LIST  rows to run, comma-separated (default: all)
          --repeat N   time each measurement N times and keep the fastest (default 1)
        rows:
          a  1 GiB random over loopback, ferry vs nc                 target ratio >= 0.6
          b  1 GiB text over a 100 Mbit/s link between namespaces    target >= 2.5x the link rate
          c  256 MiB random, --compress auto vs --compress none       target ratio >= 0.95
          d  1000 files of 4-64 KiB, ferry vs tar | nc                target ratio >= 0.5
          e  broadcast 256 MiB to 4 receivers vs 1: sender CPU time   target ratio <= 2.0
          f  4 GiB file: peak RSS of sender and receiver              target <= 64 MiB each
        """

    var scale = 1.0
    var rows = allRows
    var repeats = 1

    /// Parses the arguments after `transfer`; throws a usage message.
    init(arguments: [String]) throws(UsageError) {
        var index = 0
        func value(_ name: String) throws(UsageError) -> String {
            guard index + 1 < arguments.count else { throw UsageError(message: "\(name) needs a value") }
            index += 1
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--scale":
                let text = try value(argument)
                guard let scale = Double(text), scale > 0, scale <= 16 else {
                    throw UsageError(message: "--scale must be a number in (0, 16], not '\(text)'")
                }
                self.scale = scale
            case "--rows":
                rows = try UsageError.rows(try value(argument), of: Self.allRows, shown: "a-f")
            case "--repeat":
                repeats = try UsageError.count(try value(argument), option: argument)
            case "-h", "--help":
                throw UsageError(message: nil)
            default:
                throw UsageError(message: "unknown option '\(argument)'")
            }
            index += 1
        }
    }

    /// `bytes` times the scale, at least 4 KiB, rounded down to a multiple of 4 KiB.
    func scaled(_ bytes: Int) -> Int {
        max(4096, Int(Double(bytes) * scale) / 4096 * 4096)
    }
}

/// A command-line mistake; `message` nil means "help was asked for".
struct UsageError: Error {
    var message: String?

    /// A `--rows` list (comma-separated names of `allRows`), in `allRows`' order; an unknown or empty list is a
    /// usage error naming the rows (`shown`, e.g. "a-f").
    static func rows(_ text: String, of allRows: [String], shown: String) throws(UsageError) -> [String] {
        let list = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let unknown = list.filter { !allRows.contains($0) }
        guard !list.isEmpty, unknown.isEmpty else {
            throw UsageError(message: "unknown row(s) '\(unknown.joined(separator: ","))'; rows are \(shown)")
        }
        return allRows.filter { list.contains($0) }
    }

    /// The value of a repetition option (`--repeat`, `--rounds`): a whole number from 1 to 20.
    static func count(_ text: String, option: String) throws(UsageError) -> Int {
        guard let count = Int(text), (1...20).contains(count) else {
            throw UsageError(message: "\(option) must be 1...20, not '\(text)'")
        }
        return count
    }
}
