import FerryWire
import Foundation

/// `ferry-bench inflate zlib|zstd RAW-LENGTH FILE`: inflates the one compressed chunk in FILE with `ChunkInflater`,
/// bounded by RAW-LENGTH, and prints `inflated N` (exit 0) or `corrupt: ...` (exit 1), then `peak-kib N`: the peak
/// resident memory of this process (`VmHWM` of /proc/self/status).
///
/// Why a process of its own: it does nothing else, so its peak is what the inflater allocated and touched for this
/// one chunk plus the same start-up cost every run has. A test compares runs of it (a bomb against an honest chunk
/// of the declared length) instead of the test process's own peak, which any earlier or parallel test can have
/// raised. The peak is read here, not from `wait4`: Linux keeps in a child's `ru_maxrss` the high-water mark of the
/// memory it had before `exec`, which for `posix_spawn` is the parent's.
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
        let status: Int32
        do {
            let output = try ChunkInflater.inflate([UInt8](data), algorithm: algorithm, rawLength: rawLength)
            print("inflated \(output.count)")
            status = 0
        } catch {
            print("corrupt: \(error)")
            status = 1
        }
        print("peak-kib \(peakKiB() ?? -1)")
        return status
    }

    /// `VmHWM` of /proc/self/status: this process's peak resident set, in KiB.
    static func peakKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.dropFirst("VmHWM:".count).split(whereSeparator: \.isWhitespace).first ?? "") }
    }
}
