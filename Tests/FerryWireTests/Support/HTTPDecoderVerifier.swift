import FerryTestSupport
import Testing

@testable import FerryWire

/// Feeds a request stream to an `HTTPRequestDecoder` in every way TCP could deliver it, in the spirit of swift-nio's
/// `ByteToMessageDecoderVerifier` (and `DecoderVerifier` for frames): whole, byte by byte and in seeded random
/// splits. Body pieces depend on the splits, so parts are compared with consecutive pieces joined.
enum HTTPDecoderVerifier {
    /// What a stream decodes to: its parts (body pieces joined) and the error it ended with, if any.
    struct Outcome: Equatable, CustomStringConvertible {
        var parts: [HTTPRequestPart] = []
        var error: HTTPError?
        var buffered = 0

        var description: String { "\(parts.count) parts, error \(String(describing: error)), \(buffered) buffered" }
    }

    /// The byte counts of every split the verifier feeds `count` bytes in.
    static func splits(of count: Int) -> [[Int]] {
        var splits: [[Int]] = [[count], Array(repeating: 1, count: count)]
        for seed in UInt64(1)...12 {
            var generator = SplitMix64(seed: seed)
            var sizes: [Int] = []
            var left = count
            while left > 0 {
                let size = Int.random(in: 1...max(1, min(left, 64)), using: &generator)
                sizes.append(size)
                left -= size
            }
            splits.append(sizes)
        }
        return splits.filter { !$0.isEmpty || count == 0 }
    }

    /// Decodes `stream` fed in pieces of `sizes`, draining after each piece, until the end or the first error.
    static func decode(
        _ stream: [UInt8], in sizes: [Int], limits: HTTPRequestLimits = HTTPRequestLimits()
    ) -> Outcome {
        var decoder = HTTPRequestDecoder(limits: limits)
        var outcome = Outcome()
        var offset = 0
        for size in sizes {
            decoder.append(stream[offset..<(offset + size)])
            offset += size
            do {
                while let part = try decoder.next() {
                    outcome.parts.append(part)
                }
            } catch {
                outcome.error = error
                break
            }
        }
        outcome.parts = joined(outcome.parts)
        outcome.buffered = decoder.bufferedByteCount
        return outcome
    }

    /// `parts` with consecutive body pieces joined into one.
    static func joined(_ parts: [HTTPRequestPart]) -> [HTTPRequestPart] {
        var result: [HTTPRequestPart] = []
        for part in parts {
            if case .body(let piece) = part, case .body(let previous) = result.last {
                result[result.count - 1] = .body(previous + piece)
            } else {
                result.append(part)
            }
        }
        return result
    }

    /// Every split of `stream` decodes to `expected` and ends with `error` (nil: with nothing left buffered).
    static func verify(
        stream: [UInt8], expected: [HTTPRequestPart], error: HTTPError? = nil,
        limits: HTTPRequestLimits = HTTPRequestLimits(), sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for sizes in splits(of: stream.count) {
            let outcome = decode(stream, in: sizes, limits: limits)
            #expect(outcome.parts == expected, "split \(sizes.prefix(8))...", sourceLocation: sourceLocation)
            #expect(outcome.error == error, "split \(sizes.prefix(8))...", sourceLocation: sourceLocation)
            if error == nil {
                #expect(outcome.buffered == 0, "split \(sizes.prefix(8))...", sourceLocation: sourceLocation)
            }
        }
    }

    /// Every strict prefix of a valid `stream` is need-more: no error, and fewer request ends than the whole has.
    static func verifyPrefixesNeedMore(of stream: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let ends = decode(stream, in: [stream.count]).parts.filter { $0 == .end }.count
        for length in 0..<stream.count {
            let outcome = decode(Array(stream[..<length]), in: [length])
            #expect(outcome.error == nil, "prefix of \(length) bytes", sourceLocation: sourceLocation)
            #expect(
                outcome.parts.filter { $0 == .end }.count < ends, "prefix of \(length) bytes",
                sourceLocation: sourceLocation)
        }
    }
}
