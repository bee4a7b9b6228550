import CFerryLinux
import Glibc

extension TCPConnection {
    /// Bytes written and not yet acknowledged by the peer's TCP: those still queued here for `send`, plus the
    /// kernel's count of bytes sent and unacknowledged or not yet sent (`ioctl(SIOCOUTQ)`, see tcp(7)); nil once
    /// the connection is closed or when the kernel refuses.
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
        guard let kernel = kernel ?? nil else { return nil }
        return queuedWriteBytes + kernel
    }
}
