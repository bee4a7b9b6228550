import FerrySystem
import FerryWire
import Synchronization
import Testing

@testable import FerrySession

/// A stream that records what is written and holds the first write until `release()`.
private final class GatedStream: ByteStream {
    private struct State {
        var written: [[UInt8]] = []
        var gate: CheckedContinuation<Void, Never>?
        var released = false
        var writeStarted = false
        var finishedWriting = false
        var closed = false
    }

    private let state = Mutex(State())
    private let started: AsyncStream<Void>.Continuation
    let firstWriteStarted: AsyncStream<Void>

    init() {
        (firstWriteStarted, started) = AsyncStream.makeStream(of: Void.self)
    }

    var written: [[UInt8]] { state.withLock { $0.written } }
    var finishedWriting: Bool { state.withLock { $0.finishedWriting } }
    var closed: Bool { state.withLock { $0.closed } }

    func read(maxBytes: Int) async throws -> [UInt8] { [] }

    func write(_ bytes: [UInt8]) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                state.written.append(bytes)
                guard !state.released else { return false }
                state.gate = continuation
                return true
            }
            if wait { started.yield() } else { continuation.resume() }
        }
    }

    func release() {
        let gate = state.withLock { state in
            state.released = true
            defer { state.gate = nil }
            return state.gate
        }
        gate?.resume()
    }

    func finishWriting() async { state.withLock { $0.finishedWriting = true } }
    func close() { state.withLock { $0.closed = true } }
    var localAddress: SocketAddress { .ipv4(.loopback, port: 1) }
    var remoteAddress: SocketAddress { .ipv4(.loopback, port: 2) }
}

@Suite struct LinkWriterTests {
    /// A cancelled transfer's frames that wait unsent are dropped, a frame already begun and other frames are not;
    /// once finished the writer half-closes the stream instead of closing it (the reader drains first).
    @Test func discardDropsOnlyTheTransfersUnsentFramesAndFinishHalfCloses() async throws {
        let stream = GatedStream()
        let writer = LinkWriter(stream: stream)
        let cancelled = try #require(TransferID(bytes: [UInt8](repeating: 1, count: TransferID.length)))
        let other = try #require(TransferID(bytes: [UInt8](repeating: 2, count: TransferID.length)))
        let chunk = [UInt8](repeating: 0xC0, count: LinkWriter.batchLimit)
        writer.enqueue(frame: [[0xA0], chunk], transfer: cancelled)  // taken by the writer: goes out whole
        writer.enqueue(frame: [[0xA1], chunk], transfer: cancelled)
        writer.enqueue(frame: [[0xB0], chunk], transfer: other)
        writer.enqueue(frame: [[0xA2], chunk], transfer: cancelled)
        writer.enqueue([0xD0])  // the cancel
        let run = Task { await writer.run() }
        var iterator = stream.firstWriteStarted.makeAsyncIterator()
        await iterator.next()
        #expect(writer.discard(transfer: cancelled) == 2 * (chunk.count + 1))
        writer.enqueue([0xE0])  // the goodbye
        writer.finish()
        stream.release()
        await run.value
        let expected: [UInt8] = [0xA0] + chunk + [0xB0] + chunk + [0xD0, 0xE0]
        let sent = stream.written.flatMap { $0 }
        #expect(sent.count == expected.count, "\(stream.written.map(\.count))")
        let same = sent == expected  // not in the expectation: it would print both arrays
        #expect(same, "the bytes sent are the untouched frames in order")
        #expect(stream.finishedWriting && !stream.closed)
    }

    /// A swarm member's frames to another member are counted apart (`memberBytes`) until written, a frame being
    /// written included, whatever else the link carries; a held writer takes nothing until resumed.
    @Test func memberBytesCountOnlyMemberFramesUntilWritten() async throws {
        let stream = GatedStream()
        let writer = LinkWriter(stream: stream)
        let plain = [UInt8](repeating: 0xC0, count: LinkWriter.batchLimit)
        writer.enqueue(frame: [[1, 2, 3]], transfer: nil, member: true)  // taken first, its write held by the stream
        writer.enqueue(frame: [plain], transfer: nil)
        writer.enqueue(frame: [[4, 5]], transfer: nil, member: true)
        #expect(writer.memberBytes == 5 && writer.queuedBytes == 5 + plain.count)
        let run = Task { await writer.run() }
        var iterator = stream.firstWriteStarted.makeAsyncIterator()
        await iterator.next()
        #expect(writer.memberBytes == 5, "a member frame being written still counts")
        writer.hold()
        stream.release()
        await writer.idle()
        #expect(writer.memberBytes == 2 && writer.queuedBytes == 2 + plain.count, "the first frame was written")
        writer.resume()
        writer.finish()
        await run.value
        #expect(writer.memberBytes == 0 && writer.queuedBytes == 0)
    }

    /// Runs of small blocks are joined into blocks of at most the limit, a block at the limit or above goes alone,
    /// and every byte is sent once, in order (joined blocks are allocated at their final size, the copy is the same).
    @Test func coalescingJoinsRunsUnderTheLimitAndKeepsEveryByteInOrder() {
        var counter: UInt8 = 0
        let blocks = [10, 300, 5, 1024, 2000, 7, 4096, 1, 1, 600, 3000, 700, 400, 500].map { count in
            (0..<count).map { _ in
                counter &+= 1
                return counter
            }
        }
        let joined = LinkWriter.coalesce(blocks, limit: 1024)
        let same = joined.flatMap { $0 } == blocks.flatMap { $0 }  // not in the expectation: it would print both
        #expect(same)
        #expect(joined.map(\.count) == [315, 1024, 2000, 7, 4096, 602, 3000, 700, 900])
        #expect(LinkWriter.coalesce([[1, 2]], limit: 1) == [[1, 2]])
        #expect(LinkWriter.coalesce([], limit: 1024).isEmpty)
    }
}
