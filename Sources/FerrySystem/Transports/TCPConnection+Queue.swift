import CFerryLinux
import Glibc

extension TCPConnection {
    /// Bytes the kernel accepted from `send` that the peer's TCP has not acknowledged: sent and unacknowledged, or
    /// not yet sent (`ioctl(SIOCOUTQ)`, see tcp(7)); nil once the connection is closed or when the kernel refuses.
    /// Bytes still queued here for `send` are not counted (`queuedWriteBytes`): they wait for this process.
    ///
    /// Why: it tells where the bytes in flight are. While the network is the bottleneck they wait before it, in
    /// this socket (and the queue of a shaper on the way, which TCP counts as sent and unacknowledged); when the
    /// peer's TCP has acknowledged everything, they have crossed the link and wait for the receiving process.
    public var unacknowledgedBytes: Int? {
        let kernel = try? registration.withDescriptor { descriptor -> Int? in
            var count: Int32 = 0
            // SIOCOUTQ is TIOCOUTQ (linux/sockios.h).
            guard ioctl(descriptor.rawValue, UInt(TIOCOUTQ), &count) == 0 else { return nil }
            return Int(count)
        }
        return kernel ?? nil
    }
}

extension TCPConnection {
    /// Offsets in the kernel's `struct tcp_info` (linux/tcp.h, which cannot be included beside glibc's
    /// netinet/tcp.h; the kernel only ever appends to the struct, so they hold on every kernel that has the fields,
    /// 4.10 and later).
    private static let tcpInfoRwndLimitedOffset = 176
    private static let tcpInfoLength = 232

    /// Seconds this connection's sending has been limited by the peer's receive window since it opened
    /// (`tcpi_rwnd_limited` of `TCP_INFO`); nil once closed, or on a kernel without the field.
    ///
    /// Why: it tells a receiver that does not keep up from a link that does not. A sender with bytes to send and
    /// the peer's window closed waits for the receiving process (its socket buffer is full), however many bytes
    /// are left in ours; a link that is the bottleneck keeps the window open and the bytes queue before it.
    public var receiveWindowLimitedSeconds: Double? {
        let micros = try? registration.withDescriptor { descriptor -> UInt64? in
            var info = [UInt8](repeating: 0, count: Self.tcpInfoLength)
            var length = socklen_t(info.count)
            let result = info.withUnsafeMutableBytes { buffer in
                getsockopt(descriptor.rawValue, Int32(IPPROTO_TCP), TCP_INFO, buffer.baseAddress, &length)
            }
            guard result == 0, Int(length) >= Self.tcpInfoRwndLimitedOffset + 8 else { return nil }
            return info.withUnsafeBytes {
                $0.loadUnaligned(fromByteOffset: Self.tcpInfoRwndLimitedOffset, as: UInt64.self)
            }
        }
        guard let micros = micros ?? nil else { return nil }
        return Double(micros) / 1e6
    }
}
