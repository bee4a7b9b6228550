import Foundation
import FerryTestSupport
import FerryWire
import Testing

extension IntegrationTests {
    /// Bounded decompression (promise 5 of docs/SECURITY.md section 5), measured on the inflater alone: each case
    /// inflates one chunk in a process of its own (`ferry-bench inflate`), and the peak resident memory of that
    /// process is compared with a run that inflates an honest chunk of the same declared length. An earlier or
    /// parallel test cannot raise these figures, and a control (an honest 64 MiB chunk) shows that the measure
    /// sees what an inflation allocates.
    @Suite(.serialized) struct InflateBoundTests {
        static let declared = 1 << 20
        static let bombLength = 64 << 20
        /// What a bomb may cost beyond the honest chunk of its declared length; an unbounded inflate costs 63 MiB more.
        static let slack = 8 << 20

        /// Peak resident bytes of a `ferry-bench inflate` process (as it read them itself, `VmHWM`: the `ru_maxrss` of
        /// `wait4` would include this test process's own peak, which the child's memory held until its `exec`), and
        /// its first output line.
        static func inflate(_ codec: String, _ rawLength: Int, _ file: URL) throws -> (peak: Int, line: String) {
            let bench = try FerryBinary.locate(named: "ferry-bench")
            let process = try FerryProcess(
                executable: bench.path, arguments: ["inflate", codec, String(rawLength), file.path])
            let status = try process.waitForExit(timeout: .seconds(60))
            let lines = process.allStdoutLines
            try #require(status == 0 || status == 1, "\(process.capturedOutput())")
            let peak = try #require(lines.last.flatMap { Int($0.dropFirst("peak-kib ".count)) }, "\(lines)")
            try #require(peak > 0, "\(lines)")
            return (peak * 1024, lines.first ?? "")
        }

        /// One zstd frame of `count` zeros in RLE blocks of 128 KiB, without a content size (the frame header says
        /// only its window), as another encoder may send it: nothing before decoding tells its length.
        static func zstdZerosWithoutContentSize(_ count: Int) -> [UInt8] {
            var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3]  // magic; no size, no checksum; 128 KiB window
            let block = 128 << 10
            for start in stride(from: 0, to: count, by: block) {
                let size = min(block, count - start)
                let last = start + block >= count ? 1 : 0
                let header = UInt32(size) << 3 | 1 << 1 | UInt32(last)  // Block_Type 1: RLE
                frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16 & 0xFF), 0x00]
            }
            return frame
        }

        static func write(_ bytes: [UInt8], _ name: String, in directory: TemporaryDirectory) throws -> URL {
            let url = directory.url.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url
        }

        @Test func aZlibBombCostsNoMoreThanAnHonestChunkOfItsDeclaredLength() async throws {
            try await TemporaryDirectory.with(prefix: "ferry-inflate") { directory in
                let bomb = try #require(
                    ChunkCompressor.compress([UInt8](repeating: 0, count: Self.bombLength), algorithm: .zlib))
                let honest = try #require(
                    ChunkCompressor.compress([UInt8](repeating: 0, count: Self.declared), algorithm: .zlib))
                #expect(bomb.count < Self.declared)
                let bombFile = try Self.write(bomb, "bomb.deflate", in: directory)
                let honestFile = try Self.write(honest, "honest.deflate", in: directory)

                let baseline = try Self.inflate("zlib", Self.declared, honestFile)
                #expect(baseline.line == "inflated \(Self.declared)")
                let refused = try Self.inflate("zlib", Self.declared, bombFile)
                #expect(refused.line.contains("inflates past \(Self.declared) bytes"), "\(refused.line)")
                #expect(refused.peak < baseline.peak + Self.slack, "bomb \(refused.peak), honest \(baseline.peak)")
                // Control: the same bomb, declared at its full length, does cost its length.
                let control = try Self.inflate("zlib", Self.bombLength, bombFile)
                #expect(control.line == "inflated \(Self.bombLength)")
                #expect(
                    control.peak > baseline.peak + Self.bombLength / 2,
                    "control \(control.peak), honest \(baseline.peak)")
            }
        }

        @Test func aZstdBombWithoutAContentSizeCostsNoMoreThanAnHonestChunkOfItsDeclaredLength() async throws {
            try await TemporaryDirectory.with(prefix: "ferry-inflate") { directory in
                let bombFile = try Self.write(
                    Self.zstdZerosWithoutContentSize(Self.bombLength), "bomb.zst", in: directory)
                let honestFile = try Self.write(
                    Self.zstdZerosWithoutContentSize(Self.declared), "honest.zst", in: directory)

                let baseline = try Self.inflate("zstd", Self.declared, honestFile)
                #expect(baseline.line == "inflated \(Self.declared)")
                let refused = try Self.inflate("zstd", Self.declared, bombFile)
                #expect(refused.line.contains("inflates past \(Self.declared) bytes"), "\(refused.line)")
                #expect(refused.peak < baseline.peak + Self.slack, "bomb \(refused.peak), honest \(baseline.peak)")
                let control = try Self.inflate("zstd", Self.bombLength, bombFile)
                #expect(control.line == "inflated \(Self.bombLength)")
                #expect(
                    control.peak > baseline.peak + Self.bombLength / 2,
                    "control \(control.peak), honest \(baseline.peak)")
            }
        }
    }
}
