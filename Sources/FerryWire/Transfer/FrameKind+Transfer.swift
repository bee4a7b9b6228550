/// The frame kinds of the transfer protocol (docs/PROTOCOL.md section 11), decoded by `TransferMessage`.
///
/// All are critical (bit 15 clear) and inside `FrameKind.transferKinds`: they are only sent to a peer whose
/// hello has the `transfers` capability, so a peer without it never sees them.
extension FrameKind {
    public static let offer = FrameKind(0x0100)
    public static let offerReply = FrameKind(0x0101)
    public static let chunk = FrameKind(0x0102)
    public static let chunkAck = FrameKind(0x0103)
    public static let fileEnd = FrameKind(0x0104)
    public static let fileResult = FrameKind(0x0105)
    public static let transferCancel = FrameKind(0x0106)

    /// The transfer kinds a 1.0 peer understands, in kind order.
    public static let transferMessageKinds: [FrameKind] = [
        .offer, .offerReply, .chunk, .chunkAck, .fileEnd, .fileResult, .transferCancel,
    ]
}
