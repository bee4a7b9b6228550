import FerrySession
import FerryWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The peers this install trusts, pinned by device ID in `$XDG_CONFIG_HOME/ferry/trusted-peers`.
///
/// The file is the user's decision about whom to trust, so it is never lost quietly: each change rewrites it whole
/// into a temporary file (mode 0600, in the 0700 config directory) that is renamed over it, under an exclusive
/// `flock(2)` on `trusted-peers.lock`, so two ferry processes pinning at once both get their entry in; readers
/// need no lock since a rename is atomic. A file that does not parse is an error naming the file, never an empty
/// list that the next change would write back. Names are unique (case-insensitively): pinning a name that belongs
/// to another ID fails, which is what stops a new key from silently taking over a trusted name.
public struct TrustStore: Sendable {
    /// The config directory holding the file.
    public let directory: URL

    /// The store of the config directory `environment` selects (`ConfigDirectory`).
    public init(environment: [String: String]) {
        self.init(directory: ConfigDirectory.url(environment: environment))
    }

    init(directory: URL) {
        self.directory = directory
    }

    /// The longest alias kept: LocalSend's own bound on `alias` (docs/LOCALSEND.md, "JSON fields").
    public static let maximumAliasBytes = 256

    /// `trusted-peers`: one JSON object per line (`TrustedPeer`).
    public var file: URL { directory.appendingPathComponent("trusted-peers") }

    var lockFile: URL { directory.appendingPathComponent("trusted-peers.lock") }

    /// Every pinned peer, in the order they were first pinned; empty when the file does not exist yet.
    ///
    /// A file that someone other than this user (or root) could have changed is refused, not read: a line another
    /// local user appended would make a running receiver trust that user's device within a second
    /// (`TrustFollower`). So is a file in a config directory others can write to (they could rename another file
    /// over it), and a symbolic link (the file is replaced by rename on every change).
    public func load() throws -> [TrustedPeer] {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if descriptor < 0 {
            if errno == ENOENT { return [] }
            if errno == ELOOP {
                throw CLIError.failure(
                    "\(file.path) is a symbolic link; ferry reads its trusted peers only from a regular file there:"
                        + " replace the link with the file it points to")
            }
            throw CLIError.failure("could not read \(file.path): \(Self.lastError())")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw CLIError.failure("\(file.path) is not a regular file; remove it to forget every trusted peer")
        }
        try Self.refuseOthersWriting(status, file.path, what: "file", fix: "chmod go-w \(file.path)")
        var directoryStatus = stat()
        if stat(directory.path, &directoryStatus) == 0, directoryStatus.st_mode & S_ISVTX == 0 {
            try Self.refuseOthersWriting(
                directoryStatus, directory.path, what: "directory", fix: "chmod 700 \(directory.path)")
        }
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw CLIError.failure("could not read \(file.path): \(error.localizedDescription)")
        }
        return try Self.decode(data, file: file)
    }

    /// Throws when `status` (of the trusted-peers file or its directory) is owned by another user than this one or
    /// root, or writable by group or others.
    static func refuseOthersWriting(_ status: stat, _ path: String, what: String, fix: String) throws {
        let owner = status.st_uid
        guard owner == geteuid() || owner == 0 else {
            throw CLIError.failure(
                "ferry will not read its trusted peers from \(path): the \(what) belongs to user \(owner), who could"
                    + " change whom this device trusts; make it yours (chown) or set XDG_CONFIG_HOME to a directory of"
                    + " your own")
        }
        guard status.st_mode & 0o022 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw CLIError.failure(
                "ferry will not read its trusted peers from \(path): other users can write to the \(what) (mode"
                    + " \(mode)), and so change whom this device trusts; run `\(fix)`, then check the list with"
                    + " `ferry trust list`")
        }
    }

    /// The pinned peer with `id`, if any.
    public func entry(for id: DeviceID) throws -> TrustedPeer? {
        try load().first { $0.deviceID == id }
    }

    /// The pinned peer called `name` (compared as `DisplayNameMatch` does), if any.
    public func entry(named name: String) throws -> TrustedPeer? {
        try load().first { DisplayNameMatch.same($0.name, name) }
    }

    /// The pinned peers whose ID begins with `prefix` (grouped base32 or hex, case-insensitive, '-' ignored).
    public func entries(matching prefix: String) throws -> [TrustedPeer] {
        try load().filter { $0.deviceID.hasPrefix(prefix) }
    }

    /// The pinned LocalSend devices whose alias is `alias` (compared as `DisplayNameMatch` does).
    public func entries(alias: String) throws -> [TrustedPeer] {
        try load().filter { peer in peer.alias.map { DisplayNameMatch.same($0, alias) } ?? false }
    }

    /// Pins `id` under `name` (empty for none), or renames it when it is pinned already; returns the entry as it
    /// was before, `nil` when `id` is new. Throws when another ID is pinned under `name`. `kind` and `alias` (a
    /// LocalSend device's) are set when given and otherwise kept (a new entry is a ferry peer).
    @discardableResult
    public func pin(
        _ id: DeviceID, name: String, kind: TrustedPeer.Kind? = nil, alias: String? = nil, now: Date = Date()
    ) throws -> TrustedPeer? {
        guard (alias?.utf8.count ?? 0) <= Self.maximumAliasBytes else {
            throw CLIError.failure("a LocalSend alias must be at most \(Self.maximumAliasBytes) UTF-8 bytes")
        }
        guard name.utf8.count <= GlobalOptions.maximumNameBytes else {
            throw CLIError.failure("a peer's name must be at most \(GlobalOptions.maximumNameBytes) UTF-8 bytes")
        }
        guard name.isEmpty || !DisplayNameMatch.key(name).isEmpty else {
            throw CLIError.failure("a peer's name must have a visible character (it is compared as people read it)")
        }
        return try update { peers in
            if !name.isEmpty,
                let other = peers.first(where: { DisplayNameMatch.same($0.name, name) && $0.deviceID != id })
            {
                throw CLIError.failure(
                    "'\(TerminalText.escape(name))' is pinned to \(other.deviceID); remove it first with"
                        + " 'ferry trust remove \(other.deviceID.shortDescription)'")
            }
            if let index = peers.firstIndex(where: { $0.deviceID == id }) {
                let previous = peers[index]
                peers[index].name = name
                if let kind { peers[index].kind = kind }
                if let alias { peers[index].alias = alias }
                return previous
            }
            peers.append(
                TrustedPeer(
                    deviceID: id, name: name, added: TrustedPeer.wholeSeconds(now), kind: kind ?? .ferry, alias: alias))
            return nil
        }
    }

    /// Unpins `id`; returns the entry removed, `nil` when `id` was not pinned (the file is then left alone).
    @discardableResult
    public func remove(_ id: DeviceID) throws -> TrustedPeer? {
        try update { peers in
            guard let index = peers.firstIndex(where: { $0.deviceID == id }) else {
                return nil
            }
            return peers.remove(at: index)
        }
    }

    /// Runs `body` on the current entries under the lock and writes them back when it changed them.
    private func update<T>(_ body: (inout [TrustedPeer]) throws -> T) throws -> T {
        try ConfigDirectory.create(directory)
        let lock = open(lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw CLIError.failure("could not open \(lockFile.path): \(Self.lastError())")
        }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw CLIError.failure("could not lock \(lockFile.path): \(Self.lastError())")
            }
        }
        let before = try load()
        var peers = before
        let result = try body(&peers)
        if peers != before {
            try write(peers)
        }
        return result
    }

    /// Replaces the file by `peers`: temporary file, fsync, rename, fsync of the directory.
    private func write(_ peers: [TrustedPeer]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for peer in peers {
            data.append(try encoder.encode(peer))
            data.append(UInt8(ascii: "\n"))
        }
        let temporary = directory.appendingPathComponent(
            ".trusted-peers.\(getpid()).\(String(UInt64.random(in: 0...UInt64.max), radix: 16))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CLIError.failure("could not create \(temporary.path): \(Self.lastError())")
        }
        var published = false
        defer {
            if !published {
                unlink(temporary.path)
            }
        }
        let written = fchmod(fd, 0o600) == 0 && Self.writeAll(data, to: fd) && fsync(fd) == 0
        let reason = Self.lastError()
        close(fd)
        guard written else {
            throw CLIError.failure("could not write \(temporary.path): \(reason)")
        }
        guard rename(temporary.path, file.path) == 0 else {
            throw CLIError.failure("could not replace \(file.path): \(Self.lastError())")
        }
        published = true
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private static func writeAll(_ data: Data, to fd: Int32) -> Bool {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
    }

    /// Parses the file's lines; any line that is not an entry, or a second entry for one ID, is damage.
    static func decode(_ data: Data, file: URL) throws -> [TrustedPeer] {
        let decoder = JSONDecoder()
        var peers: [TrustedPeer] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        where !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) {
            guard let peer = try? decoder.decode(TrustedPeer.self, from: Data(line)) else {
                throw damaged(file, line: index + 1, "not a trusted peer entry")
            }
            guard !peers.contains(where: { $0.deviceID == peer.deviceID }) else {
                throw damaged(file, line: index + 1, "a second entry for \(peer.deviceID.shortDescription)")
            }
            peers.append(peer)
        }
        return peers
    }

    private static func damaged(_ file: URL, line: Int, _ problem: String) -> CLIError {
        .failure(
            "\(file.path) is damaged (line \(line): \(problem)); repair the line, or remove the file to forget"
                + " every trusted peer and pin them again with 'ferry trust add'")
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
