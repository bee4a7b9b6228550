import Foundation

/// The TCP streams and UDP payloads of a pcap file that `tcpdump -w` wrote on `lo`: what someone on the path sees.
///
/// Why parse: searching the raw file would miss a needle split over two segments; the streams are each direction's
/// TCP payloads joined in capture order (on loopback nothing is lost or reordered), so a needle anywhere in what a
/// side sent is found. Reads the classic pcap format (microsecond or nanosecond magic, either byte order) with an
/// Ethernet link layer (what Linux reports for `lo`), IPv4 and IPv6 (no extension headers); other packets are
/// skipped and counted.
struct PacketCapture {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Each direction of each TCP connection ("src.port > dst.port"): its payload bytes, in order.
    var tcpStreams: [String: [UInt8]] = [:]
    /// Each UDP datagram's payload.
    var udpPayloads: [[UInt8]] = []
    var packets = 0
    var skipped = 0

    /// TCP payload bytes in all streams.
    var tcpBytes: Int { tcpStreams.values.reduce(0) { $0 + $1.count } }

    init(contentsOf path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count >= 24 else { throw Failure(description: "\(path): \(bytes.count) bytes, no pcap header") }
        let magic = Self.uint32(bytes, 0, littleEndian: true)
        let littleEndian: Bool
        switch magic {
        case 0xA1B2_C3D4, 0xA1B2_3C4D: littleEndian = true
        case 0xD4C3_B2A1, 0x4D3C_B2A1: littleEndian = false
        default: throw Failure(description: "\(path): not a pcap file (magic \(String(magic, radix: 16)))")
        }
        let linkType = Self.uint32(bytes, 20, littleEndian: littleEndian)
        guard linkType == 1 else { throw Failure(description: "\(path): link type \(linkType), not Ethernet") }
        var offset = 24
        while offset + 16 <= bytes.count {
            let length = Int(Self.uint32(bytes, offset + 8, littleEndian: littleEndian))
            let start = offset + 16
            guard start + length <= bytes.count else { break }  // a record cut short by the end of the capture
            packets += 1
            if !add(ethernet: bytes[start..<(start + length)]) { skipped += 1 }
            offset = start + length
        }
    }

    /// Where `needle` occurs: in some TCP stream, in some UDP payload.
    func find(_ needle: [UInt8]) -> (tcp: Bool, udp: Bool) {
        (
            tcpStreams.values.contains { Self.contains($0[...], needle) },
            udpPayloads.contains { Self.contains($0[...], needle) }
        )
    }

    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return needle.isEmpty }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    private mutating func add(ethernet frame: ArraySlice<UInt8>) -> Bool {
        guard frame.count >= 14 else { return false }
        let base = frame.startIndex
        let etherType = Int(frame[base + 12]) << 8 | Int(frame[base + 13])
        let ip = frame[(base + 14)...]
        let i = ip.startIndex
        var proto: UInt8
        var payload: ArraySlice<UInt8>
        var source: String
        var destination: String
        switch etherType {
        case 0x0800 where ip.count >= 20:
            let headerLength = Int(ip[i] & 0x0F) * 4
            let total = Int(ip[i + 2]) << 8 | Int(ip[i + 3])
            guard headerLength >= 20, total >= headerLength, total <= ip.count else { return false }
            proto = ip[i + 9]
            payload = ip[(i + headerLength)..<(i + total)]
            source = ip[(i + 12)..<(i + 16)].map(String.init).joined(separator: ".")
            destination = ip[(i + 16)..<(i + 20)].map(String.init).joined(separator: ".")
        case 0x86DD where ip.count >= 40:
            let total = 40 + (Int(ip[i + 4]) << 8 | Int(ip[i + 5]))
            guard total <= ip.count else { return false }
            proto = ip[i + 6]
            payload = ip[(i + 40)..<(i + total)]
            source = ip[(i + 8)..<(i + 24)].map { String($0, radix: 16) }.joined(separator: ":")
            destination = ip[(i + 24)..<(i + 40)].map { String($0, radix: 16) }.joined(separator: ":")
        default:
            return false
        }
        let p = payload.startIndex
        switch proto {
        case 6 where payload.count >= 20:
            let dataOffset = Int(payload[p + 12] >> 4) * 4
            guard dataOffset >= 20, dataOffset <= payload.count else { return false }
            let ports = (Int(payload[p]) << 8 | Int(payload[p + 1]), Int(payload[p + 2]) << 8 | Int(payload[p + 3]))
            tcpStreams["\(source).\(ports.0) > \(destination).\(ports.1)", default: []]
                .append(contentsOf: payload[(p + dataOffset)...])
            return true
        case 17 where payload.count >= 8:
            udpPayloads.append(Array(payload[(p + 8)...]))
            return true
        default:
            return false
        }
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int, littleEndian: Bool) -> UInt32 {
        let four = bytes[offset..<(offset + 4)].map(UInt32.init)
        return littleEndian
            ? four[0] | four[1] << 8 | four[2] << 16 | four[3] << 24
            : four[0] << 24 | four[1] << 16 | four[2] << 8 | four[3]
    }
}
