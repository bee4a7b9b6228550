import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Standard input copied into a private temporary file, for `ferry send -`: an offer names every file's size before
/// the first byte is sent, and a pipe's size is known only at its end.
///
/// The file is created with `mkstemp` (mode 0600; close-on-exec set at once) in `$TMPDIR` (else `/tmp`) and unlinked at once,
/// before a byte is read: it has no name from then on, so nothing is left behind however ferry ends (an error,
/// Ctrl-C, SIGKILL, a crash), and the system frees its blocks when the descriptor closes. The transfer engine opens
/// it as `/proc/self/fd/N`, which reaches the open file (not a path that could be swapped). Once complete, the file
/// is made 0644 (unreachable by name, it stays private) so that the receiver publishes it as an ordinary file.
final class StandardInputSpool: Sendable {
    /// Where the engine opens it: `/proc/self/fd/N`.
    let path: String
    /// How many bytes standard input held.
    let size: UInt64
    private let descriptor: Int32

    /// Above this many bytes, ferry says on stderr that it is still reading (and where it keeps the copy).
    static let largeInput: UInt64 = 16 << 20

    private init(descriptor: Int32, size: UInt64) {
        self.descriptor = descriptor
        self.size = size
        path = "/proc/self/fd/\(descriptor)"
    }

    deinit {
        close(descriptor)
    }

    /// The temporary directory: `$TMPDIR` when it is an absolute path, else `/tmp`.
    static func directory(_ environment: [String: String]) -> String {
        guard let value = environment["TMPDIR"], value.hasPrefix("/") else { return "/tmp" }
        return value
    }

    /// Reads `input` to its end into a new spool file in `directory`; `say` gets the line shown once the input
    /// passes `largeInput`.
    ///
    /// Runs on a thread of its own (reading blocks); waits for input with `poll` so that cancellation (Ctrl-C) is
    /// seen within a fifth of a second even while nothing arrives.
    /// - Throws: `CLIError.failure` naming what failed (the directory, a full disk); `CancellationError`.
    static func spool(
        from input: Int32 = STDIN_FILENO, into directory: String, say: @escaping @Sendable (String) -> Void
    ) async throws -> StandardInputSpool {
        let cancelled = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<StandardInputSpool, any Error>) in
                let thread = Thread {
                    continuation.resume(
                        with: Result { try copy(from: input, into: directory, cancelled: cancelled, say: say) })
                }
                thread.name = "ferry-stdin-spool"
                thread.start()
            }
        } onCancel: {
            cancelled.value.store(true, ordering: .relaxed)
        }
    }

    private static func copy(
        from input: Int32, into directory: String, cancelled: CancelFlag, say: (String) -> Void
    ) throws -> StandardInputSpool {
        let shownDirectory = TerminalText.excerpt(directory)
        var template = Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast())
        template += Array("ferry-stdin-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw CLIError.failure(
                "cannot keep standard input in \(shownDirectory) before sending it: \(Self.reason(errno)); set TMPDIR "
                    + "to a writable directory")
        }
        let created = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        unlink(created)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        var handedOver = false
        defer {
            if !handedOver { close(descriptor) }
        }
        var total: UInt64 = 0
        var announced = false
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            if cancelled.value.load(ordering: .relaxed) { throw CancellationError() }
            var waiting = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, 200)
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            let count = read(input, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw CLIError.failure("cannot read standard input: \(Self.reason(errno))")
            }
            if count == 0 { break }
            var written = 0
            while written < count {
                let result = write(descriptor, buffer.baseAddress! + written, count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw CLIError.failure(
                        "cannot keep standard input in \(shownDirectory) before sending it (after "
                            + "\(TransferFormat.bytes(total))): \(Self.reason(errno)); set TMPDIR to a directory with "
                            + "room for it")
                }
                written += result
                total += UInt64(result)
            }
            if !announced, total > largeInput {
                announced = true
                say(
                    "reading standard input into a temporary file in \(shownDirectory) before sending it (the offer "
                        + "needs its size; the copy goes when ferry exits); \(TransferFormat.bytes(total)) so far")
            }
        }
        fchmod(descriptor, 0o644)
        if announced {
            say("read \(TransferFormat.bytes(total)) from standard input")
        }
        handedOver = true
        return StandardInputSpool(descriptor: descriptor, size: total)
    }

    private final class CancelFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    private static func reason(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
