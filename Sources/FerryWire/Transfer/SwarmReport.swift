/// A member tells the sender that another member broke the swarm's rules with it (a bad chunk): the sender
/// counts it, names it in its output and removes the offender from the swarm.
///
/// Payload (kind 0x010C, on the sender's link):
///
/// ```
/// +------------+----------+--------+-----------+------------+--------------------------+
/// | transferID | offender | reason | fileIndex | chunkIndex | trailing bytes (ignored) |
/// | bytes[16]  | u16      | u8     | u32       | u32        |                          |
/// +------------+----------+--------+-----------+------------+--------------------------+
/// ```
///
/// `offender` is an index into the offer's member list; `fileIndex` and `chunkIndex` name the chunk concerned
/// (for the output; 0 when the reason concerns no chunk).
public struct SwarmReport: Equatable, Sendable {
    /// The reporter's transfer (the sender's link).
    public var transferID: TransferID
    /// The member reported.
    public var offender: UInt16
    /// What it did.
    public var reason: SwarmReportReason
    /// The file of the chunk concerned.
    public var fileIndex: UInt32
    /// The chunk concerned.
    public var chunkIndex: UInt32

    /// A report on member `offender`.
    public init(
        transferID: TransferID, offender: UInt16, reason: SwarmReportReason, fileIndex: UInt32, chunkIndex: UInt32
    ) {
        self.transferID = transferID
        self.offender = offender
        self.reason = reason
        self.fileIndex = fileIndex
        self.chunkIndex = chunkIndex
    }
}

extension SwarmReport {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "swarmReport")
        transferID = try reader.readTransferID("transferID")
        offender = try reader.readUInt16("offender")
        reason = SwarmReportReason(rawValue: try reader.readUInt8("reason"))
        fileIndex = try reader.readUInt32("fileIndex")
        chunkIndex = try reader.readUInt32("chunkIndex")
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        writer.write(transferID)
        writer.write(offender)
        writer.write(reason.rawValue)
        writer.write(fileIndex)
        writer.write(chunkIndex)
    }
}

/// Why a member was reported (u8, open set: an unknown reason is carried and counted as misbehaviour).
public struct SwarmReportReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent.
    public var rawValue: UInt8

    /// Any value.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// It sent a chunk whose raw bytes do not match the sender's digest (or did not inflate to the chunk's length).
    public static let badChunk = SwarmReportReason(rawValue: 1)
    /// It broke another swarm rule: a malformed frame, a chunk nobody requested, a chunk outside the offer.
    public static let protocolError = SwarmReportReason(rawValue: 2)

    /// The reason in words.
    public var description: String {
        switch self {
        case .badChunk: "sent a chunk that did not match the sender's digest"
        case .protocolError: "broke the swarm protocol"
        default: "unknown reason (\(rawValue))"
        }
    }
}
