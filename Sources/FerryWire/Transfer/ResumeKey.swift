/// Names the staged data of one file from one sender, so that sending the same file again resumes it.
///
/// The key is the SHA-256 of the sender's device ID, the file's path, size, modification time and the chunk size
/// (hex): a changed source file (another size or time) gets another key and starts over. Not on the wire: the name
/// of the receiver's staged file (`.ferry-staging/KEY`), here beside the wire values it is made of so that the
/// receive path and the tests that prepare a staged file name it the same way.
public enum ResumeKey {
    /// The key of `file` offered by `sender` in chunks of `chunkSize` bytes: 64 hex digits.
    public static func make(sender: DeviceID, file: OfferedFile, chunkSize: UInt32) -> String {
        var bytes: [UInt8] = Array("ferry-resume-1".utf8)
        bytes += sender.bytes
        let path = Array(file.path.utf8)
        bytes += withUnsafeBytes(of: UInt32(path.count).bigEndian, Array.init)
        bytes += path
        bytes += withUnsafeBytes(of: file.size.bigEndian, Array.init)
        bytes += withUnsafeBytes(of: file.modificationTime.seconds.bigEndian, Array.init)
        bytes += withUnsafeBytes(of: file.modificationTime.nanoseconds.bigEndian, Array.init)
        bytes += withUnsafeBytes(of: chunkSize.bigEndian, Array.init)
        return Hex.string(SHA256Hasher.digest(bytes))
    }
}
