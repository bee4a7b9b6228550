import Foundation
import Glibc

/// One captured output stream of a child (stdout or stderr), split into lines by a reader thread.
///
/// Why a thread per stream: a child that fills one pipe while we wait on the other would block
/// forever; reading both continuously avoids that, and the line buffer lets tests wait for lines.
final class OutputCapture: Sendable {
    struct State: Sendable {
        var lines: [String] = []
        /// Index of the next line `next(until:)` returns.
        var cursor = 0
        var partial: [UInt8] = []
        var finished = false
    }

    enum Next: Sendable {
        case line(String)
        case endOfOutput
        case timedOut
    }

    let name: String
    let state = Monitor(State())

    init(name: String) {
        self.name = name
    }

    /// Starts the reader thread; it owns and closes `fd`, and stops early when `wakeFD` is readable.
    func start(reading fd: Int32, wakeFD: Int32) {
        let state = self.state
        let thread = Thread {
            OutputCapture.readLoop(fd: fd, wakeFD: wakeFD, state: state)
        }
        thread.name = "ferry-test-\(name)"
        thread.start()
    }

    private static func readLoop(fd: Int32, wakeFD: Int32, state: Monitor<State>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
        defer {
            buffer.deallocate()
            Descriptor.close(fd)
            state.withLock { state in
                if !state.partial.isEmpty {
                    state.lines.append(String(decoding: state.partial, as: UTF8.self))
                    state.partial = []
                }
                state.finished = true
            }
        }
        var descriptors = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            let count = Descriptor.read(fd, into: buffer)
            guard count > 0 else { return }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            state.withLock { state in append(bytes, to: &state) }
        }
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, to state: inout State) {
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: 0x0A) {
            state.partial.append(contentsOf: bytes[start..<newline])
            state.lines.append(String(decoding: state.partial, as: UTF8.self))
            state.partial.removeAll(keepingCapacity: true)
            start = newline + 1
        }
        state.partial.append(contentsOf: bytes[start...])
    }

    /// The next unread line, waiting until `deadline`.
    func next(until deadline: Deadline) -> Next {
        state.wait(until: deadline) { state -> Next? in
            if state.cursor < state.lines.count {
                state.cursor += 1
                return .line(state.lines[state.cursor - 1])
            }
            return state.finished ? .endOfOutput : nil
        } ?? .timedOut
    }

    /// Waits until the stream is closed; false on timeout.
    func waitFinished(until deadline: Deadline) -> Bool {
        state.wait(until: deadline) { $0.finished ? true : nil } ?? false
    }

    /// Every complete line so far, read or not, plus the unterminated tail if any.
    var allLines: [String] {
        state.withLock { state in
            state.partial.isEmpty ? state.lines : state.lines + [String(decoding: state.partial, as: UTF8.self)]
        }
    }

    var isFinished: Bool { state.withLock { $0.finished } }
}
