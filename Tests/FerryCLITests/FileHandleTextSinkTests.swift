import Foundation
import Glibc
import Synchronization
import Testing

@testable import FerryCLI

/// Output never blocks its writer (issue 9, section 5: a terminal that stopped reading stalled the engine).
@Suite struct FileHandleTextSinkTests {
    /// Reads `handle` until the text contains `marker`, the pipe ends, or `timeout` passed (a bound, so that a broken
    /// sink fails the test instead of hanging it).
    static func read(_ handle: FileHandle, until marker: String, timeout: Duration = .seconds(30)) -> String {
        let fd = handle.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + timeout
        while !String(decoding: data, as: UTF8.self).contains(marker), ContinuousClock.now < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 200)
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count == 0 { break }
            if count > 0 { data.append(contentsOf: buffer[0..<count]) }
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

    /// Lines written from several threads at once (texts queued together go out in one write) each arrive whole,
    /// every one of them, and those of one thread in the order it wrote them.
    @Test func linesFromManyThreadsArriveWholeAndInTheirOrder() throws {
        let pipe = Pipe()
        defer { try? pipe.fileHandleForReading.close() }
        let sink = FileHandleTextSink(pipe.fileHandleForWriting, label: "test.output")
        let threads = 4
        let perThread = 2000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread { sink.writeLine("t\(thread) \(index) " + String(repeating: "y", count: index % 90)) }
        }
        sink.writeLine("end")
        let text = Self.read(pipe.fileHandleForReading, until: "end\n")
        sink.flush()
        try? pipe.fileHandleForWriting.close()
        var next = [Int](repeating: 0, count: threads)
        for line in text.split(separator: "\n") where line != "end" {
            let fields = line.split(separator: " ")
            let thread = Int(fields[0].dropFirst()) ?? -1
            let index = Int(fields[1]) ?? -1
            guard thread >= 0, thread < threads, index >= 0 else {
                Issue.record("a line cut or mixed with another: \(line)")
                continue
            }
            #expect(index == next[thread], "\(line)")
            #expect(String(line) == "t\(thread) \(index) " + String(repeating: "y", count: index % 90), "\(line)")
            next[thread] = index + 1
        }
        #expect(next == [Int](repeating: perThread, count: threads))
    }

    /// Two sinks on one pipe (stdout and stderr with `2>&1`, or two processes on one log), writing many lines at once
    /// while the reader is slow: every line arrives whole. Texts are joined into writes of at most `PIPE_BUF` bytes,
    /// which the kernel keeps together; one long write would be split and the other sink's bytes put inside a line
    /// (StalledOutputTests saw it with two processes on one FIFO).
    @Test func twoSinksOnOnePipeNeverMixTheirLines() throws {
        let pipe = Pipe()
        let sinks = [
            FileHandleTextSink(pipe.fileHandleForWriting, label: "test.one"),
            FileHandleTextSink(pipe.fileHandleForWriting, label: "test.two"),
        ]
        let perSink = 3000
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for line in 0..<perSink {
                sinks[index].writeLine("s\(index) \(line) " + String(repeating: index == 0 ? "a" : "b", count: 60))
            }
        }
        // Both sinks written out, then the pipe closed: the reader reads to its end.
        let closer = Thread {
            for sink in sinks { sink.flush() }
            try? pipe.fileHandleForWriting.close()
        }
        closer.start()
        let text = Self.read(pipe.fileHandleForReading, until: "\u{0}")
        try? pipe.fileHandleForReading.close()
        var counts = [0, 0]
        var mixed: [Substring] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            let index = fields.count == 3 ? Int(fields[0].dropFirst()) ?? -1 : -1
            let filler = String(repeating: index == 0 ? "a" : "b", count: 60)
            if index == 0 || index == 1, String(line) == "s\(index) \(fields[1]) " + filler {
                counts[index] += 1
            } else {
                mixed.append(line.prefix(200))
            }
        }
        #expect(mixed.isEmpty, "\(mixed.count) lines mixed with another, the first: \(mixed.first ?? "")")
        #expect(counts == [perSink, perSink])
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
