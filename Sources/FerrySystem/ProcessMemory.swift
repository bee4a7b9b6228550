import CFerryLinux

/// How the C allocator treats freed memory, for the whole process.
public enum ProcessMemory {
    /// Keeps freed buffers for reuse instead of giving them back to the kernel: blocks up to 32 MiB (every chunk,
    /// frame and socket read) come from the heap rather than an mmap of their own, and up to 16 MiB may stay free at
    /// the top of a heap (`mallopt(3)` `M_MMAP_THRESHOLD`, `M_TRIM_THRESHOLD`); and all threads share one heap
    /// (`M_ARENA_MAX` 1).
    ///
    /// Why: each frame's payload, each chunk read and each socket read is a fresh array of up to a few MiB. With
    /// glibc's defaults the heap gave the freed pages back and the next array faulted them in again, zeroed by the
    /// kernel, page by page: a receiver took about 120 000 page faults a GiB (the `copy` branch's measurements,
    /// ARCHITECTURE "Where the CPU goes"). Peak memory stays what the windows and queues bound. Why one heap: glibc
    /// gives threads heaps of their own (up to 8 per core), and each kept its own freed buffers, so the same few
    /// MiB of chunks were held once per thread that had freed some: a receiver of a 4-receiver broadcast (a swarm
    /// member, whose chunks are freed on the I/O, session and engine threads) peaked at 62-71 MiB, with one heap
    /// at 51 MiB, at the same CPU (`ferry-bench compare --rows 5`). Call once, early.
    @discardableResult
    public static func keepFreedBuffers() -> Bool {
        ferry_keep_freed_memory(32 << 20, 16 << 20, 1) == 1
    }
}
