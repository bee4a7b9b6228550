import Foundation
import Synchronization
import Testing

@testable import FerryCLI

/// Output never blocks its writer (issue 9, section 5: a terminal that stopped reading stalled the engine).
@Suite struct FileHandleTextSinkTests {
    /// Reads `handle` until `text` contains `marker`, or the pipe ends.
    static func read(_ handle: FileHandle, until marker: String) -> String {
        var data = Data()
        while !String(decoding: data, as: UTF8.self).contains(marker) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            data += chunk
        }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func writesToAPipeNobodyReadsReturnAtOnceAndNothingButDroppableTextIsLost() async throws {
        let pipe = Pipe()
        defer { try? pipe.fileHandleForReading.close() }
        let sink = FileHandleTextSink(pipe.fileHandleForWriting, label: "test.output")
        // Far more than a pipe holds (64 KiB): a write(2) from the caller's thread would block at the first few.
        let lines = (0..<4000).map { "result line \($0) " + String(repeating: "x", count: 60) }
        let done = Mutex(false)
        let writer = Thread {
            for (index, line) in lines.enumerated() {
                sink.writeLine(line)
                sink.writeDroppable("progress \(index)\n")
            }
            done.withLock { $0 = true }
        }
        writer.start()
        // The writer thread must finish while nobody reads (generous bound; it takes milliseconds).
        let deadline = ContinuousClock.now + .seconds(30)
        while !done.withLock({ $0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(done.withLock { $0 }, "writing blocked on a pipe nobody reads")
        #expect(sink.isBackedUp)
        #expect(sink.droppedCount > 0, "progress is dropped while the output is backed up")
        // Now the reader comes back: every line that must not be lost arrives, in order, then the note.
        let text = Self.read(pipe.fileHandleForReading, until: "were dropped\n")
        sink.flush()
        let received = text.split(separator: "\n").filter { $0.hasPrefix("result line") }.map(String.init)
        #expect(received == lines)
        #expect(text.contains("progress updates or log lines were dropped"))
        try? pipe.fileHandleForWriting.close()
    }

    @Test func flushWaitsUntilEverythingIsWritten() throws {
        let pipe = Pipe()
        let sink = FileHandleTextSink(pipe.fileHandleForWriting, label: "test.output")
        sink.writeLine("summary")
        sink.flush()
        try pipe.fileHandleForWriting.close()
        #expect(String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "summary\n")
    }
}
