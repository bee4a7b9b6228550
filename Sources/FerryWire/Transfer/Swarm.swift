/// The optional swarm section of an `Offer`: the broadcast's swarm ID and every recipient, fixed for the transfer.
///
/// Recipients of the same broadcast exchange verified chunks with each other; a member serves chunks only to the
/// device IDs listed here and accepts swarm links only from them (the sender vouches for the list, TLS proves the
/// device ID). Layout after the offer's entries (PROTOCOL.md 11.3, 11.11):
///
/// ```
/// +-------------+-----------+--------------------------+--------------------------+
/// | memberCount | swarmID   | memberCount x member     | trailing bytes (ignored) |
/// | u16         | bytes[16] | see SwarmMember          |                          |
/// +-------------+-----------+--------------------------+--------------------------+
/// ```
///
/// `memberCount` 0 means "no swarm" and nothing of the section follows (an encoder writes nothing at all then);
/// otherwise it is 2...256, checked before anything is reserved, and the device IDs are distinct.
public struct Swarm: Equatable, Sendable {
    /// The broadcast's ID, the same in every recipient's offer.
    public var swarmID: SwarmID
    /// Every recipient of the broadcast, in the sender's order; frames name members by their index here.
    public var members: [SwarmMember]

    /// A swarm section with the given fields; `validate()` checks the limits.
    public init(swarmID: SwarmID, members: [SwarmMember]) {
        self.swarmID = swarmID
        self.members = members
    }

    /// The index of `deviceID` in the member list, or nil.
    public func index(of deviceID: DeviceID) -> Int? {
        members.firstIndex { $0.deviceID == deviceID }
    }

    /// Throws `invalidField` for a member count outside 2...256, a repeated device ID or an invalid address.
    public func validate() throws(WireError) {
        try Self.checkCount(members.count)
        for member in members {
            try member.validate()
        }
        try Self.checkDistinct(members)
    }

    /// Bytes of the section.
    var encodedLength: Int {
        members.reduce(2 + SwarmID.length) { $0 + $1.encodedLength }
    }

    static func checkCount(_ count: Int) throws(WireError) {
        guard (Limits.minSwarmMembers...Limits.maxSwarmMembers).contains(count) else {
            throw .invalidField(
                "memberCount: \(count), not 0 or \(Limits.minSwarmMembers)...\(Limits.maxSwarmMembers)")
        }
    }

    static func checkDistinct(_ members: [SwarmMember]) throws(WireError) {
        var seen = Set<DeviceID>()
        for member in members where !seen.insert(member.deviceID).inserted {
            throw .invalidField("members: device ID \(member.deviceID) listed twice")
        }
    }
}

extension Swarm {
    /// Reads the section after an offer's entries: nil when no byte is left or `memberCount` is 0.
    static func read(from reader: inout ByteReader) throws(WireError) -> Swarm? {
        guard reader.remainingCount > 0 else { return nil }
        let count = Int(try reader.readUInt16("memberCount"))
        guard count != 0 else { return nil }
        try checkCount(count)
        let swarmID = try reader.readSwarmID("swarmID")
        var members: [SwarmMember] = []
        members.reserveCapacity(
            reader.boundedCapacity(count: count, minimumElementLength: SwarmMember.minimumEncodedLength))
        for _ in 0..<count {
            members.append(try SwarmMember(from: &reader))
        }
        try checkDistinct(members)
        return Swarm(swarmID: swarmID, members: members)
    }

    func write(to writer: inout ByteWriter) {
        writer.write(UInt16(members.count))
        writer.write(swarmID)
        for member in members {
            member.write(to: &writer)
        }
    }
}

/// One recipient of a swarm broadcast: who it is and where the sender reached it.
///
/// ```
/// +-----------+-----------------------------+
/// | deviceID  | address str8 (0...64)       |
/// | bytes[32] | printable ASCII "host:port" |
/// +-----------+-----------------------------+
/// ```
///
/// The address is where other members may open a session link to it (its listen address as the sender knows
/// it, e.g. `10.0.0.7:41971` or `[fe80::1%eth0]:41971`); empty when the sender knows none. The wire checks only
/// the length and printable ASCII (0x21-0x7E); parsing it is the engine's business.
public struct SwarmMember: Equatable, Sendable {
    /// Bytes of a member with an empty address.
    static let minimumEncodedLength = DeviceID.length + 1
    static let addressLengths = 0...Limits.maxSwarmAddressLength

    /// The member's device ID: TLS proves it on every swarm link.
    public var deviceID: DeviceID
    /// Where to reach it, "host:port"; "" when unknown.
    public var address: String

    /// A member with the given fields.
    public init(deviceID: DeviceID, address: String) {
        self.deviceID = deviceID
        self.address = address
    }

    /// Throws `invalidField` for an address longer than 64 bytes or not printable ASCII.
    public func validate() throws(WireError) {
        try StringField.validate(address, "address", lengths: Self.addressLengths)
        try StringField.checkPrintableASCII(address.utf8, "address")
    }

    var encodedLength: Int { Self.minimumEncodedLength + address.utf8.count }
}

extension SwarmMember {
    init(from reader: inout ByteReader) throws(WireError) {
        deviceID = try reader.readDeviceID("deviceID")
        address = try reader.readString8("address", lengths: Self.addressLengths)
        try StringField.checkPrintableASCII(address.utf8, "address")
    }

    func write(to writer: inout ByteWriter) {
        writer.write(bytes: deviceID.bytes)
        writer.write(string8: address)
    }
}
