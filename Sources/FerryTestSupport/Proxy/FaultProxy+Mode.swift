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
        /// Hold every chunk read in `direction` for this long before forwarding it (the other stream passes): a peer
        /// that reads slowly while it sends at full speed.
        case delayOneWay(Duration, direction: Direction)
        /// Stop forwarding but keep every socket open, until the mode changes (at most one chunk per
        /// stream is read and held, so the sender soon sees back-pressure).
        case stall
        /// Forward the first `afterBytes` bytes of a stream, then close both sockets of the connection.
        case truncate(afterBytes: Int, direction: Direction = .both)
        /// Flip the lowest bit of every `every`-th byte (stream offsets every-1, 2*every-1, ...).
        case flipBits(every: Int, direction: Direction = .clientToServer)
        /// Flip the lowest bit of the byte at each of these stream offsets (counted from 0 on every
        /// connection's stream, on its own for each direction), so a test can damage one chunk's payload
        /// rather than a header; offsets past the end of a stream and negative ones are ignored.
        /// Written `.flipBits(atOffsets:direction:)` (a case cannot share `flipBits`'s name and still be matched).
        case flipBitsAt(offsets: [Int], direction: Direction)

        /// Flip the lowest bit of the byte at each given stream offset of each connection (see `flipBitsAt`).
        public static func flipBits(atOffsets offsets: [Int], direction: Direction = .clientToServer) -> Mode {
            .flipBitsAt(offsets: offsets, direction: direction)
        }
        /// Read and discard; never answer. Connections accepted in this mode never reach the target.
        case blackHole
    }
}
