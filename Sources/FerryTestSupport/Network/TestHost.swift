/// One host of a `TestBed`: a network namespace with an `eth0` on the bed's bridge.
///
/// Why a value: tests pass hosts around to start processes on them and to address them
/// (`--peer \(host.address):port`), without holding on to the bed.
public struct TestHost: Sendable, Hashable, CustomStringConvertible {
    /// Position in `TestBed.hosts`.
    public let index: Int
    /// The network namespace name (`ip netns exec <namespace> ...`).
    public let namespace: String
    /// The IPv4 address of `interface`, without prefix length (e.g. "10.203.4.2").
    public let address: String
    /// The host's interface on the bridge, always "eth0".
    public let interface: String
    /// Prefix length of `address` (24).
    public let prefixLength: Int

    public var description: String { "\(namespace) (\(address))" }
}
