/// A member will not serve a requested chunk, and says why; the requester asks elsewhere.
///
/// Payload (kind 0x010B, on a member link):
///
/// ```
/// +-----------+-----------+------------+--------+--------------------------+
/// | swarmID   | fileIndex | chunkIndex | reason | trailing bytes (ignored) |
/// | bytes[16] | u32       | u32        | u8     |                          |
/// +-----------+-----------+------------+--------+--------------------------+
/// ```
public struct SwarmRefuse: Equatable, Sendable {
    /// The swarm.
    public var swarmID: SwarmID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// The chunk refused.
    public var chunkIndex: UInt32
    /// Why.
    public var reason: SwarmRefuseReason

    /// A refusal of chunk `chunkIndex` of file `fileIndex`.
    public init(swarmID: SwarmID, fileIndex: UInt32, chunkIndex: UInt32, reason: SwarmRefuseReason) {
        self.swarmID = swarmID
        self.fileIndex = fileIndex
        self.chunkIndex = chunkIndex
        self.reason = reason
    }
}

extension SwarmRefuse {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "swarmRefuse")
        swarmID = try reader.readSwarmID("swarmID")
        fileIndex = try reader.readUInt32("fileIndex")
        chunkIndex = try reader.readUInt32("chunkIndex")
        reason = SwarmRefuseReason(rawValue: try reader.readUInt8("reason"))
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        writer.write(swarmID)
        writer.write(fileIndex)
        writer.write(chunkIndex)
        writer.write(reason.rawValue)
    }
}

/// Why a member refused a request (u8, open set: an unknown reason is carried and treated as `notHeld`).
public struct SwarmRefuseReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent.
    public var rawValue: UInt8

    /// Any value.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The member does not hold the chunk verified (never announced it, or lost it).
    public static let notHeld = SwarmRefuseReason(rawValue: 1)
    /// The requester is not, or no longer, a member this member serves (not in the list, cut off).
    public static let notMember = SwarmRefuseReason(rawValue: 2)
    /// The requester has `Limits.maxSwarmRequestsInFlight` requests outstanding already.
    public static let busy = SwarmRefuseReason(rawValue: 3)
    /// The member no longer relays in this swarm (it left, was cancelled, or relays for nobody).
    public static let notRelaying = SwarmRefuseReason(rawValue: 4)

    /// The reason in words.
    public var description: String {
        switch self {
        case .notHeld: "the chunk is not held"
        case .notMember: "not a member served"
        case .busy: "too many requests outstanding"
        case .notRelaying: "not relaying"
        default: "unknown reason (\(rawValue))"
        }
    }
}
