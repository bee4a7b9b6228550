import Foundation

/// Lines typed on standard input, as an async stream that ends at end of input.
///
/// Reading stdin blocks, so one plain thread reads it and hands lines over; the thread ends at end of input
/// (a process that exits earlier simply leaves it behind).
enum StandardInputLines {
    static func stream() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine(strippingNewline: true) {
                continuation.yield(line)
            }
            continuation.finish()
        }
        thread.name = "ferry-stdin"
        thread.start()
        return stream
    }
}
