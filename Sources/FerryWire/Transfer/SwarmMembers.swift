/// The sender's list of the swarm members that take part: who a member may fetch from and serve.
///
/// Sent by the sender to every member that replied with `relay`, once the replies are in and again whenever one
/// leaves or is cut off: a full list each time (idempotent), as indices into the offer's member list. Payload
/// (kind 0x0107, on the sender's link):
///
/// ```
/// +------------+-------+-------------------+--------------------------+
/// | transferID | count | count x member    | trailing bytes (ignored) |
/// | bytes[16]  | u16   | u16, increasing   |                          |
/// +------------+-------+-------------------+--------------------------+
/// ```
///
/// `count` is 0...256; the indices are strictly increasing (so distinct), else `invalidField`. Whether each is
/// below the offer's member count is the engine's check.
public struct SwarmMembers: Equatable, Sendable {
    /// The recipient's transfer (the sender's link).
    public var transferID: TransferID
    /// Indices into the offer's member list, strictly increasing; the recipient itself is among them.
    public var members: [UInt16]

    /// The list of active members.
    public init(transferID: TransferID, members: [UInt16]) {
        self.transferID = transferID
        self.members = members
    }

    /// Throws `invalidField` for more than 256 indices or indices not strictly increasing.
    public func validate() throws(WireError) {
        try Self.check(members)
    }

    static func check(_ members: [UInt16]) throws(WireError) {
        guard members.count <= Limits.maxSwarmMembers else {
            throw .invalidField("count: \(members.count), not in 0...\(Limits.maxSwarmMembers)")
        }
        for index in members.indices.dropFirst() where members[index] <= members[index - 1] {
            throw .invalidField("members: \(members[index]) after \(members[index - 1]), not increasing")
        }
    }
}

extension SwarmMembers {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "swarmMembers")
        transferID = try reader.readTransferID("transferID")
        let count = Int(try reader.readUInt16("count"))
        guard count <= Limits.maxSwarmMembers else {
            throw .invalidField("count: \(count), not in 0...\(Limits.maxSwarmMembers)")
        }
        var members: [UInt16] = []
        members.reserveCapacity(reader.boundedCapacity(count: count, minimumElementLength: 2))
        for _ in 0..<count {
            members.append(try reader.readUInt16("member"))
        }
        try Self.check(members)
        self.members = members
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "SwarmMembers.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(UInt16(members.count))
        for member in members {
            writer.write(member)
        }
    }
}
