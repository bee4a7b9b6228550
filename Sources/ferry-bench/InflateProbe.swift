import FerryWire
import Foundation

/// `ferry-bench inflate zlib|zstd RAW-LENGTH FILE`: inflates the one compressed chunk in FILE with `ChunkInflater`,
/// bounded by RAW-LENGTH, and prints `inflated N` (exit 0) or `corrupt: ...` (exit 1).
///
/// Why a process of its own: the process does nothing else, so its peak resident memory, which the kernel reports
/// to whoever waits for it (`wait4`), is what the inflater allocated and touched for this one chunk plus the same
/// start-up cost every run has. A test compares runs of it (a bomb against an honest chunk of the declared length)
/// instead of the test process's own peak, which any earlier or parallel test can have raised.
enum InflateProbe {
    static let usage = "usage: ferry-bench inflate zlib|zstd RAW-LENGTH FILE"

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count == 3, let rawLength = Int(arguments[1]), rawLength >= 0,
            let algorithm = arguments[0] == "zlib" ? CompressionAlgorithm.zlib : arguments[0] == "zstd" ? .zstd : nil
        else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            return 64
        }
        guard let data = FileManager.default.contents(atPath: arguments[2]) else {
            FileHandle.standardError.write(Data("error: cannot read \(arguments[2])\n".utf8))
            return 66
        }
        do {
            let output = try ChunkInflater.inflate([UInt8](data), algorithm: algorithm, rawLength: rawLength)
            print("inflated \(output.count)")
            return 0
        } catch {
            print("corrupt: \(error)")
            return 1
        }
    }
}
