import FerryTestSupport
import Testing

@testable import FerryWire

/// Seeded random and mutated inputs into every decoder: whatever the bytes, a decoder returns a value, nil or a
/// `WireError`, and never traps (a trap would crash the test process).
@Suite("Fuzz")
struct FuzzTests {
    static let iterations = 3000

    /// Random bytes, or a golden fixture with a few bytes changed, truncated or extended.
    static func input(_ generator: inout SplitMix64, golden: [[UInt8]]) -> [UInt8] {
        if Bool.random(using: &generator) {
            return generator.bytes(count: Int.random(in: 0...600, using: &generator))
        }
        var bytes = golden.randomElement(using: &generator) ?? []
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

    static func golden(_ names: [String]) throws -> [[UInt8]] {
        try names.map(Fixtures.bytes)
    }

    @Test func frameStreamAndMessages() throws {
        let golden = try Self.golden(Samples.frameCases.map(\.name))
        var generator = SplitMix64(seed: 1)
        for _ in 0..<Self.iterations {
            var decoder = FrameDecoder(maximumPayloadLength: Int.random(in: 0...2048, using: &generator))
            let bytes = Self.input(&generator, golden: golden)
            decoder.append(bytes)
            do {
                while let frame = try decoder.nextFrame() {
                    _ = try? SessionMessage(frame: frame)
                }
            } catch {
                // Any WireError is an acceptable answer; the point is that nothing traps.
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test func everyKindWithRandomPayload() throws {
        let golden = try Self.golden(Samples.frameCases.map(\.name)).map { Array($0.dropFirst(Frame.headerLength)) }
        var generator = SplitMix64(seed: 2)
        for _ in 0..<Self.iterations {
            for kind in FrameKind.sessionKinds + [FrameKind(0x8123), FrameKind(0x0123)] {
                let frame = Frame(kind: kind, payload: Self.input(&generator, golden: golden))
                guard let message = try? SessionMessage(frame: frame) else { continue }
                if case .ignored = message { continue }
                // Whatever decodes re-encodes to something that decodes to the same value.
                #expect(try SessionMessage(frame: message.frame) == message)
            }
        }
    }

    @Test func prefaceDatagramBeacon() throws {
        let golden = try Self.golden(["preface", "datagram", "beacon", "beacon-query"])
        var generator = SplitMix64(seed: 3)
        for _ in 0..<Self.iterations {
            let bytes = Self.input(&generator, golden: golden)
            _ = try? Preface.decode(bytes[...])
            if let datagram = try? Datagram(decoding: bytes[...]) {
                #expect(try Datagram(decoding: try datagram.encoded()[...]) == datagram)
            }
            if let beacon = try? Beacon(decoding: bytes[...]) {
                #expect(try Beacon(decoding: beacon.encoded()[...]) == beacon)
            }
        }
    }

    @Test func identifiersFromText() {
        var generator = SplitMix64(seed: 4)
        let alphabet = Array("0123456789abcdefABCDEFxyzXYZ-ë ".unicodeScalars)
        for _ in 0..<Self.iterations {
            let length = Int.random(in: 0...70, using: &generator)
            var text = String.UnicodeScalarView()
            for _ in 0..<length {
                text.append(alphabet.randomElement(using: &generator)!)
            }
            let string = String(text)
            // A peer ID is 1 to 16 hex digits; what parses prints back as the same digits, lowercased, zero-padded.
            let isPeerID = (1...16).contains(string.utf8.count) && string.allSatisfy { $0.isASCII && $0.isHexDigit }
            if let peerID = PeerID(hex: string) {
                #expect(isPeerID, "\(string) parsed as a peer ID")
                let padding = String(repeating: "0", count: 16 - string.utf8.count)
                #expect(peerID.description == padding + string.lowercased())
            } else {
                #expect(!isPeerID, "\(string) did not parse as a peer ID")
            }
            // A device ID that parses is printed in its one canonical form, which parses to the same ID.
            if let deviceID = DeviceID(string: string) {
                #expect(DeviceID(string: deviceID.description) == deviceID)
            }
            _ = Samples.deviceID.hasPrefix(string)
        }
        // The alphabet reaches the accepting cases too: a valid peer ID and a valid device ID in another spelling.
        #expect(PeerID(hex: "0123456789ABCDEF")?.description == "0123456789abcdef")
        #expect(DeviceID(string: Samples.deviceID.hex) == Samples.deviceID)
        #expect(DeviceID(string: Samples.deviceID.description) == Samples.deviceID)
    }
}
