import Foundation
import Synchronization

/// Lines typed on standard input, as an async stream that ends at end of input.
///
/// Reading stdin blocks, so one plain thread reads it, for the whole process, and hands each line to the newest
/// stream (a process that exits earlier simply leaves it behind). One reader, not one per stream: a reader left
/// blocked by an earlier question (the peer picker) would otherwise take the answer typed to the next one
/// (the pairing code). A newer stream replaces an older one, which ends; lines typed while no stream is open are
/// dropped, so an answer typed too early never answers a question shown later.
enum StandardInputLines {
    private struct State {
        var current: AsyncStream<String>.Continuation?
        var started = false
        var ended = false
    }

    private static let state = Mutex(State())

    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let start = state.withLock { state in
            state.current?.finish()
            state.current = continuation
            if state.ended {
                continuation.finish()
                return false
            }
            defer { state.started = true }
            return !state.started
        }
        if start {
            let thread = Thread {
                while let line = readLine(strippingNewline: true) {
                    _ = state.withLock { $0.current }?.yield(line)
                }
                state.withLock { state in
                    state.ended = true
                    state.current?.finish()
                }
            }
            thread.name = "ferry-stdin"
            thread.start()
        }
        return stream
    }
}
