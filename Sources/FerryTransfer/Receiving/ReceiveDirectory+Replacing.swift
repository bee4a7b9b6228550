import FerrySystem
import FerryWire

/// Which files a sender delivered, so that a newer version from the same sender may replace one (the offer flag
/// `replaces`, PROTOCOL.md 11.10 rule 11: `ferry watch` re-sending a changed file).
///
/// Why a record beside the staged files and not an extended attribute on the file: user xattrs are missing on some
/// file systems (tmpfs before Linux 6.6, vfat, some network mounts) and are copied along by tools, while the staging
/// folder is ferry's own (mode 0700, on the same file system). One record per published path, in
/// `.ferry-staging/delivered/<SHA-256 of the path>`: the sender's device ID and the file's identity when it was
/// published (device, inode, size, modification time). A name is replaced only when its record names the same sender
/// and the file there still has that identity: a file someone else delivered, a local user created, edited in place
/// (size or modification time changed) or replaced by another file (inode) is never overwritten.
extension ReceiveDirectory {
    /// The folder of delivery records, inside the staging folder.
    static let deliveredFolder = "delivered"

    /// One delivery: who sent the file published under a path, and that file's identity then.
    struct DeliveryRecord: Equatable {
        var sender: String
        var device: UInt64
        var inode: UInt64
        var size: UInt64
        var modificationTime: FileTimestamp

        init(sender: String, status: FerrySystem.FileStatus) {
            self.sender = sender
            device = status.device
            inode = status.inode
            size = status.size
            modificationTime = status.modificationTime
        }

        /// Parses a record's one line: `v1 SENDER DEVICE INODE SIZE SECONDS NANOSECONDS`.
        init?(line: String) {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count == 7, fields[0] == "v1", let device = UInt64(fields[2]), let inode = UInt64(fields[3]),
                let size = UInt64(fields[4]), let seconds = Int64(fields[5]),
                let nanoseconds = UInt32(fields[6].trimmingSuffix("\n"))
            else { return nil }
            sender = fields[1]
            self.device = device
            self.inode = inode
            self.size = size
            modificationTime = FileTimestamp(seconds: seconds, nanoseconds: nanoseconds)
        }

        var line: String {
            "v1 \(sender) \(device) \(inode) \(size) \(modificationTime.seconds) \(modificationTime.nanoseconds)\n"
        }

        /// Whether `status` is the file this record describes, unchanged.
        func describes(_ status: FerrySystem.FileStatus) -> Bool {
            status.kind == .regular && status.device == device && status.inode == inode && status.size == size
                && status.modificationTime == modificationTime
        }
    }

    /// The record's name for a published path (relative to the receive directory, as spelled on disk).
    static func recordName(of path: String) -> String {
        Hex.string(SHA256Hasher.digest(Array(path.utf8)))
    }

    /// Whether `name` in `directory` (the published path `path`) is the file `sender` delivered there, unchanged
    /// since. Any error counts as no.
    func isDelivered(_ name: String, in directory: DirectoryHandle, path: String, by sender: String) -> Bool {
        guard let records = try? staging.subdirectory(Self.deliveredFolder, create: false) else { return false }
        defer { records.close() }
        guard let file = try? records.openFile(Self.recordName(of: path), writable: false) else { return false }
        defer { file.close() }
        guard let bytes = try? file.read(count: 256, at: 0),
            let record = DeliveryRecord(line: String(decoding: bytes, as: UTF8.self)), record.sender == sender,
            let status = try? directory.status(of: name)
        else { return false }
        return record.describes(status)
    }

    /// Records that `sender` delivered the file of `status` under `path`, replacing an earlier record (written to a
    /// temporary name, then renamed over it). Best effort: without a record, the next version gets a numbered name.
    func recordDelivery(path: String, by sender: String, status: FerrySystem.FileStatus) {
        guard
            let records = try? staging.subdirectory(Self.deliveredFolder, create: true, permissions: 0o700)
        else { return }
        defer { records.close() }
        let name = Self.recordName(of: path)
        let temporary = name + ".new"
        guard let file = try? records.createFile(temporary, permissions: 0o600, exclusive: false) else { return }
        let written =
            (try? file.truncate(to: 0)) != nil
            && (try? file.write(Array(DeliveryRecord(sender: sender, status: status).line.utf8), at: 0)) != nil
        file.close()
        if written { try? records.rename(temporary, to: records, as: name, replace: true) }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
