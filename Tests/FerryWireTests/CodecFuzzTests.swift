import FerryTestSupport
import Testing

@testable import FerryWire

/// Seeded random and mutated inputs into the sniffer and the inflaters: whatever the bytes, they answer or throw
/// `CompressionError`, and never trap (a trap would crash the test process).
@Suite("Codec fuzz")
struct CodecFuzzTests {
    static let iterations = 3000

    static func mutated(_ bytes: [UInt8], _ generator: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
        }
        switch Int.random(in: 0...2, using: &generator) {
        case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
        case 1: bytes += generator.bytes(count: Int.random(in: 0...40, using: &generator))
        default: break
        }
        return bytes
    }

    @Test func sniffNeverTraps() {
        var generator = SplitMix64(seed: 21)
        let samples = CodecSnifferTests.cases.map(\.bytes)
        for _ in 0..<Self.iterations {
            let bytes =
                Bool.random(using: &generator)
                ? generator.bytes(count: Int.random(in: 0...300, using: &generator))
                : Self.mutated(samples.randomElement(using: &generator) ?? [], &generator)
            let info = MediaSniffer.sniff(bytes)
            #expect(info.mediaType != nil || (info.pixelWidth == 0 && info.pixelHeight == 0))
        }
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func inflateNeverTraps(algorithm: CompressionAlgorithm) throws {
        var generator = SplitMix64(seed: algorithm == .zlib ? 22 : 23)
        let raw = Array(CodecCompressionTests.text.prefix(2000)) + generator.bytes(count: 50)
        let valid = try #require(ChunkCompressor.compress(raw, algorithm: algorithm))
        var accepted = 0
        for _ in 0..<Self.iterations {
            let bytes =
                Bool.random(using: &generator)
                ? generator.bytes(count: Int.random(in: 0...300, using: &generator))
                : Self.mutated(valid, &generator)
            let rawLength = Bool.random(using: &generator) ? raw.count : Int.random(in: 0...4096, using: &generator)
            do {
                let output = try ChunkInflater.inflate(bytes, algorithm: algorithm, rawLength: rawLength)
                #expect(output.count == rawLength)
                accepted += 1
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
        // Mutations that keep the data valid (e.g. unchanged bytes) are rare but possible; most must be refused.
        #expect(accepted < Self.iterations / 2)
    }
}
