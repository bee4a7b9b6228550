/// The bounds of `HTTPRequestDecoder`, in bytes unless named otherwise; a request over one is refused with the
/// status its error names (docs/SECURITY.md, "Pre-authentication bounds"; docs/LOCALSEND.md, "Wire").
///
/// Why these numbers: the requests LocalSend apps and browsers send have a head of a few hundred bytes (a
/// request line with three UUID query parameters, five to ten short fields); 16 KiB is what common servers
/// allow (nginx's large header buffers are 8 KiB a line), so a real client never meets them, and a peer that
/// never ends its head costs at most this much memory per connection before it is refused.
public struct HTTPRequestLimits: Equatable, Sendable {
    /// The whole head: request line, header fields and the empty line (431 above).
    public var maxHeadBytes = 16 * 1024
    /// The request line, so the target (414 above).
    public var maxRequestLineLength = 8 * 1024
    /// One header field line (431 above).
    public var maxHeaderLineLength = 8 * 1024
    /// Header fields in one request (431 above).
    public var maxHeaderCount = 64
    /// One chunk-size line with its extensions (400 above: no client sends extensions this long).
    public var maxChunkLineLength = 1024
    /// The trailer section after the last chunk, all lines together (431 above).
    public var maxTrailerBytes = 4 * 1024

    public init() {}
}
