/// The frames of files sent whole in one chunk, held by a pump until they go to the session together.
///
/// Why: a send of many small files handed each file's chunk (with its `fileEnd`) to the session alone, so the link
/// writer woke, wrote one TLS record and one `sendto` per file, and the receiver's reader, engine and I/O queue woke
/// once per file in turn: about five context switches a file on each end (ARCHITECTURE "Row 2, a tenth session").
/// The pump now holds a one-chunk file's frames while its next step is another chunk, up to `maximumBytes` of chunk
/// data or `maximumFiles` files, and hands them over in one queue entry: one write, and on the receiver one read
/// and one turn of each queue for several files. Anything else the pump does next (wait for its window or for room
/// at the peer, a chunk of a larger file, a lone `fileEnd`, the end) hands over what is held first, so frames still
/// go out in the order the machine decided them and nothing waits behind a held frame.
struct SmallFileFrames {
    /// Most chunk data held.
    static let maximumBytes = 256 << 10
    /// Most files held.
    static let maximumFiles = 64

    private(set) var blocks: [[UInt8]] = []
    private var bytes = 0
    private var files = 0

    var isEmpty: Bool { blocks.isEmpty }

    /// Whether no further file may be held.
    var isFull: Bool { bytes >= Self.maximumBytes || files >= Self.maximumFiles }

    /// Whether a file whose chunk carries `dataLength` bytes is held rather than sent alone: a one-chunk file that
    /// fits beside what is held.
    func holds(dataLength: Int) -> Bool {
        !isFull && (isEmpty || bytes + dataLength <= Self.maximumBytes)
    }

    mutating func add(_ frames: [[UInt8]], dataLength: Int) {
        blocks += frames
        bytes += dataLength
        files += 1
    }

    /// The frames held, in order; none are held after.
    mutating func take() -> [[UInt8]] {
        defer { self = SmallFileFrames() }
        return blocks
    }
}
