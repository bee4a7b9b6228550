import Foundation

/// Options of `ferry-bench compare`: which rows, how large, how many rounds.
///
/// Why a type: the full run moves tens of gigabytes and takes minutes; `--scale small` runs the same contenders on
/// small files in well under a minute (for a test), and the parser rejects what it does not know.
struct CompareOptions: Sendable {
    static let allRows = ["1", "2", "3", "4", "5", "6"]
    static let usage = """
        usage: ferry-bench compare [--scale small|full|F] [--rows 1,2,3,4,5,6] [--rounds N]
          --scale S    full (default), small (a quick run: 16 MiB instead of 1 GiB, 50 files), or a factor in (0, 16]
          --rows LIST  rows to run, comma-separated (default: all)
          --rounds N   timed rounds after one untimed warm-up round (default 3); each figure is the median
        rows (contenders alternate within each round, on the same files):
          1  1 GiB random over loopback: ferry (kept digests, and --rehash as a first send), scp into sshd,
             rsync daemon, nc; fairness: rsync --fsync, nc + sync
          2  1000 files of 4-64 KiB: ferry send DIR and the same bytes as one file, scp -r, rsync -rt daemon,
             tar c | nc | tar x; fairness as row 1
          3  ferry --compress auto on loopback: text against random bytes of the same size (512 MiB)
          4  --compress auto over a 100 Mbit/s link between network namespaces (root), a tar of /usr/include:
             ferry against rsync -z (zstd level 3) and scp -C over the same link
          5  broadcast of 256 MiB to 4 receivers against 1: ferry's sender CPU
          6  a 1 KiB file end to end to a receiver already running, found by name: ferry, scp, nc (milliseconds)
        files go under $TMPDIR (else /tmp): TMPDIR=/dev/shm runs every contender in memory, without the disk.
        MB/s are 10^6 bytes per second; CPU s/GiB is user + system seconds of all processes of one end per 2^30
        bytes; peak RSS is in MiB (2^20 bytes).
        """

    var factor = 1.0
    var scaleName = "full"
    var rows = allRows
    var rounds = 3

    /// Parses the arguments after `compare`; throws a usage message.
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
                switch text {
                case "small": (factor, scaleName) = (1.0 / 64, "small")
                case "full": (factor, scaleName) = (1.0, "full")
                default:
                    guard let factor = Double(text), factor > 0, factor <= 16 else {
                        throw UsageError(message: "--scale must be small, full or a number in (0, 16], not '\(text)'")
                    }
                    (self.factor, scaleName) = (factor, String(format: "%g", factor))
                }
            case "--rows":
                rows = try UsageError.rows(try value(argument), of: Self.allRows, shown: "1-6")
            case "--rounds":
                rounds = try UsageError.count(try value(argument), option: argument)
            case "-h", "--help":
                throw UsageError(message: nil)
            default:
                throw UsageError(message: "unknown option '\(argument)'")
            }
            index += 1
        }
    }

    /// `bytes` times the scale, at least 1 MiB, rounded down to a multiple of 4 KiB.
    func scaled(_ bytes: Int) -> Int {
        max(1 << 20, Int(Double(bytes) * factor) / 4096 * 4096)
    }

    /// The file count of row 2 (1000 at full scale, at least 50).
    var fileCount: Int {
        max(50, Int(1000 * min(factor, 1)))
    }
}
