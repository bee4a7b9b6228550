import CFerryLinux
import Glibc

/// The direct-I/O side of a `RegularFile` that is written with `O_DIRECT` where it can be: a second, write-only open
/// of the same file, an aligned bounce buffer, and the alignment the file system asks for.
///
/// Why: a large received file goes to the disk and is not read again by the receiver, so the page cache only costs
/// it. A buffered `pwrite` copies every byte into the page cache, the write-behind then starts the writeback and drops
/// the written pages, and the kernel does the page and buffer bookkeeping for each: 0.4 s of a receiver's system time
/// per GiB on this machine's ext4, against 0.25 s with direct writes (ARCHITECTURE.md "Where the CPU goes per GiB").
/// A direct write needs its offset, length and buffer address aligned (`statx(2)` STATX_DIOALIGN says how; file
/// systems that do not say, tmpfs among them, get no direct writes). A received chunk lands in a Swift array at
/// any address, so it is copied into the aligned buffer first: one copy in user space in place of the kernel's copy
/// into the page cache and its bookkeeping. What is not aligned (a file's last, partial block) is written buffered
/// through the first open, and the sync before publishing commits both. `@unchecked Sendable`: its one owner,
/// `RegularFile`, touches it only under its `Mutex`.
final class DirectWrites: @unchecked Sendable {
    /// The most bytes copied into the bounce buffer at once: a bigger write goes in pieces of this size. One
    /// transparent huge page (2 MiB on x86-64), so that a chunk's direct write is one run of contiguous memory.
    static let bufferSize = 2 << 20

    private var descriptor: Int32
    private let memoryAlignment: Int
    private let offsetAlignment: Int
    private var buffer: UnsafeMutableRawBufferPointer?
    /// Set when the file system refused a direct write that `statx` said it takes (EINVAL): the rest goes buffered.
    private(set) var refused = false

    /// A second open of `file` (open as `descriptor`) with O_DIRECT, or nil where its file system reports no direct
    /// I/O alignment, /proc is missing, or the open fails: then the file is written buffered, as before.
    init?(reopening descriptor: FileDescriptor, status: FileStatus) {
        var memory: UInt32 = 0
        var offset: UInt32 = 0
        guard ferry_direct_io_alignment(descriptor.rawValue, &memory, &offset) == 1,
            memory.nonzeroBitCount == 1, offset.nonzeroBitCount == 1, Int(offset) <= Self.bufferSize
        else { return nil }
        let direct = ferry_reopen_direct(descriptor.rawValue)
        guard direct >= 0 else { return nil }
        // The same file, or none: /proc/self/fd names the open file, but nothing else is trusted blindly.
        guard case .success(let reopened) = FileDescriptor(rawValue: direct)._status(),
            reopened.device == status.device, reopened.inode == status.inode
        else {
            Glibc.close(direct)
            return nil
        }
        self.descriptor = direct
        self.memoryAlignment = max(Int(memory), 16)
        self.offsetAlignment = Int(offset)
    }

    deinit {
        close()
    }

    /// Writes the longest prefix of `bytes` that is whole aligned blocks at `offset`, directly; returns how many bytes
    /// it wrote (0 when `offset` is not aligned, `bytes` is shorter than a block, or direct writes were refused or
    /// closed). The caller writes the rest buffered. A failed direct write (ENOSPC, EIO...) is its `pwrite(2)` errno,
    /// for the caller to report as a write error.
    func writePrefix(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, Errno> {
        guard descriptor >= 0, !refused, offset % Int64(offsetAlignment) == 0 else { return .success(0) }
        let length = bytes.count / offsetAlignment * offsetAlignment
        guard length > 0, let buffer = bounceBuffer() else { return .success(0) }
        var written = 0
        while written < length {
            let piece = min(length - written, buffer.count)
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[written..<(written + piece)]))
            var done = 0
            while done < piece {
                let rest = UnsafeRawBufferPointer(rebasing: buffer[done..<piece])
                switch FileDescriptor(rawValue: descriptor)._write(rest, at: offset + Int64(written + done)) {
                case .failure(let errno) where errno == .invalidArgument && written + done == 0:
                    refused = true  // not aligned as statx said, or not supported after all: buffered from now on
                    return .success(0)
                case .failure(let errno):
                    return .failure(errno)
                case .success(let count):
                    // pwrite makes no progress only on a broken file system; never loop forever on it.
                    guard count > 0 else { return .failure(.ioError) }
                    done += count
                }
                // A short write ends mid-block: what is left goes buffered.
                if done < piece, done % offsetAlignment != 0 { return .success(written + done) }
            }
            written += piece
        }
        return .success(written)
    }

    /// Where the bounce buffer is, once a direct write allocated it (tests look at its mapping).
    var bufferAddress: UnsafeMutableRawPointer? { buffer?.baseAddress }

    /// Closes the second open and frees the buffer. Idempotent.
    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        if let buffer { free(buffer.baseAddress) }
        buffer = nil
    }

    /// The aligned buffer, allocated on first use (nil if the allocation fails: the write then goes buffered).
    ///
    /// Aligned to its own size and asked to be a transparent huge page (`madvise(2)` MADV_HUGEPAGE; a hint, where
    /// the kernel has none the buffer is ordinary pages): then it is physically contiguous, and the block layer takes
    /// a 1 MiB chunk's write as one segment and one request. From 4 KiB pages the same write was 256 segments, more
    /// than a virtio disk's 254 per request: two requests, and two notifications of the device, each a VM exit that
    /// costs the receiver about 65 microseconds of system time on this VM (`iowrite16` under `vp_notify` was 5.8 % of
    /// a receiver's CPU, 0.13 s per GiB).
    private func bounceBuffer() -> UnsafeMutableRawBufferPointer? {
        if let buffer { return buffer }
        var memory: UnsafeMutableRawPointer?
        let alignment = max(memoryAlignment, Self.bufferSize)
        guard posix_memalign(&memory, alignment, Self.bufferSize) == 0, let memory else { return nil }
        _ = madvise(memory, Self.bufferSize, MADV_HUGEPAGE)
        buffer = UnsafeMutableRawBufferPointer(start: memory, count: Self.bufferSize)
        return buffer
    }
}
