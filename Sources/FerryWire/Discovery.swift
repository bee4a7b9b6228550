/// Well-known addresses and ports of LAN discovery.
///
/// Constants of the protocol rather than of any one driver, so every peer (and a compatible
/// implementation) uses the same group and ports.
public enum Discovery {
    /// IPv4 administratively-scoped multicast group that beacons are sent to.
    public static let multicastGroup = "239.255.70.89"
    /// UDP port of the beacon group.
    public static let port: UInt16 = 41970
    /// TCP port a peer listens on for links unless configured otherwise.
    public static let defaultTCPPort: UInt16 = 41971
}
