extension FaultProxy {
    /// Which stream of a proxied connection a fault applies to.
    public enum Direction: Sendable, Equatable {
        /// Bytes the client sends towards the target.
        case clientToServer
        /// Bytes the target sends back to the client.
        case serverToClient
        /// Both streams, each counted on its own.
        case both

        func includes(_ direction: Direction) -> Bool {
            self == .both || self == direction
        }
    }

    /// What the proxy does with the bytes it relays; may be changed while connections are open.
    public enum Mode: Sendable, Equatable {
        /// Forward everything unchanged.
        case pass
        /// Hold every chunk read for this long before forwarding it.
        case delay(Duration)
        /// Stop forwarding but keep every socket open, until the mode changes (at most one chunk per
        /// stream is read and held, so the sender soon sees back-pressure).
        case stall
        /// Forward the first `afterBytes` bytes of a stream, then close both sockets of the connection.
        case truncate(afterBytes: Int, direction: Direction = .both)
        /// Flip the lowest bit of every `every`-th byte (stream offsets every-1, 2*every-1, ...).
        case flipBits(every: Int, direction: Direction = .clientToServer)
        /// Read and discard; never answer. Connections accepted in this mode never reach the target.
        case blackHole
    }
}
