/// Where an interrupted file resumes, from what is staged for it.
///
/// Only chunks that matched their digest are written, in order, so the staged length is verified data, except that a
/// process killed in the middle of a write may leave part of a chunk: the offset is rounded down to a chunk. A
/// staged file longer than the offered size cannot come from this file (its size is part of the key): start over.
public enum ResumePlan {
    /// Where a file of `size` resumes when `stagedLength` bytes of it are staged: the staged length rounded down to a
    /// chunk, the whole size when complete, 0 when the staged file is longer than the file.
    public static func offset(stagedLength: UInt64, size: UInt64, chunkSize: UInt64) -> UInt64 {
        precondition(chunkSize > 0, "chunk size must be positive")
        if stagedLength > size { return 0 }
        if stagedLength == size { return size }
        return stagedLength / chunkSize * chunkSize
    }
}
