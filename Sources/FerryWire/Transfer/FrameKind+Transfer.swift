/// The frame kinds of the transfer protocol (docs/PROTOCOL.md section 11), decoded by `TransferMessage`.
///
/// All are critical (bit 15 clear) and inside `FrameKind.transferKinds`: they are only sent to a peer whose
/// hello has the `transfers` capability, so a peer without it never sees them.
extension FrameKind {
    /// `offer` (11.3): the sender proposes files.
    public static let offer = FrameKind(0x0100)
    /// `offerReply` (11.4): the receiver accepts (some of) the files or denies the offer.
    public static let offerReply = FrameKind(0x0101)
    /// `chunk` (11.5): bytes of one file, with their chunk digest.
    public static let chunk = FrameKind(0x0102)
    /// `chunkAck` (11.6): the receiver stored a chunk (or asks for it again).
    public static let chunkAck = FrameKind(0x0103)
    /// `fileEnd` (11.7): the sender sent the last chunk of a file; its file digest.
    public static let fileEnd = FrameKind(0x0104)
    /// `fileResult` (11.8): how the file ended on the receiver's side.
    public static let fileResult = FrameKind(0x0105)
    /// `transferCancel` (11.9): either side ends the whole transfer.
    public static let transferCancel = FrameKind(0x0106)
    /// `swarmMembers` (11.11): the sender lists the swarm members that take part.
    public static let swarmMembers = FrameKind(0x0107)
    /// `chunkDigests` (11.11): the sender's chunk digests and each chunk's seed.
    public static let chunkDigests = FrameKind(0x0108)
    /// `swarmHave` (11.11): a member announces chunks it verified.
    public static let swarmHave = FrameKind(0x0109)
    /// `swarmRequest` (11.11): a member asks another member, or the sender, for a chunk.
    public static let swarmRequest = FrameKind(0x010A)
    /// `swarmRefuse` (11.11): a member will not serve a requested chunk.
    public static let swarmRefuse = FrameKind(0x010B)
    /// `swarmReport` (11.11): a member tells the sender another member sent it a bad chunk.
    public static let swarmReport = FrameKind(0x010C)

    /// The transfer kinds a 1.0 peer understands, in kind order.
    public static let transferMessageKinds: [FrameKind] = [
        .offer, .offerReply, .chunk, .chunkAck, .fileEnd, .fileResult, .transferCancel, .swarmMembers, .chunkDigests,
        .swarmHave, .swarmRequest, .swarmRefuse, .swarmReport,
    ]
}
