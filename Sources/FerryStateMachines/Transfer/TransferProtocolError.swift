/// A peer broke the transfer protocol (an ack for a chunk never sent, a chunk out of order, a reply that does not
/// fit the offer). The engine cancels the transfer and closes the link: peer misbehaviour is never a trap.
public struct TransferProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the peer did wrong, for the log and the `transferCancel` detail.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
