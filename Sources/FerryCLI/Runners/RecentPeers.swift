import FerrySession
import FerrySystem
import FerryWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The peers that connected to this install's `ferry receive` lately, with the pairing code of their link, in
/// `$XDG_CONFIG_HOME/ferry/recent-peers`: what lets `ferry trust add NAME` pin a peer that only sends.
///
/// Why: a sender accepts no connections and announces nothing, so `trust add NAME` cannot reach it to compare a
/// code; but the receiver it sent to had a link with it and showed that link's code (the one the sender's person
/// was asked to compare). The receiver keeps the last `capacity` of them here; `trust add NAME` offers the device
/// ID and that code for the person to compare, and pins nothing without a yes. The file only proposes: nothing
/// is trusted because it is here, so a lost update (two receivers writing at once) loses a proposal, not a pin.
/// One JSON object a line, newest last, rewritten whole (temporary file, rename) in the 0700 config directory; a
/// file another user owns or can write, or a line that does not parse, is ignored.
public struct RecentPeers: Sendable {
    /// One peer that connected: its device ID (hex in the file), name, the link's pairing code, when.
    public struct Entry: Codable, Equatable, Sendable {
        /// The device ID as stored: 64 hex digits of its certificate's SHA-256 (`device` reads it).
        public var deviceID: String
        /// The display name its hello gave.
        public var name: String
        /// The link's 6-digit pairing code, when both pairing nonces were known.
        public var code: String?
        /// Where the link came from (host:port), when known.
        public var address: String?
        /// When its link reached its hello.
        public var at: Date

        /// The device ID, when the stored text is one.
        public var device: DeviceID? {
            deviceID.utf8.count == DeviceID.length * 2 ? DeviceID(string: deviceID) : nil
        }
    }

    /// How many peers the file keeps (the newest).
    public static let capacity = 32
    /// Seconds between two new devices recorded from one address (an IPv4 address, or an IPv6 /64): a stranger
    /// that connects with fresh keys adds at most one entry a minute.
    public static let newDeviceInterval: TimeInterval = 60
    /// Entries one address keeps at most: a new device from an address that has this many replaces that address's
    /// oldest, never another address's peer (32 fresh keys from one stranger emptied the file before).
    public static let perAddress = 4

    /// The config directory holding the file.
    public let directory: URL

    /// The file of the config directory `environment` selects (`ConfigDirectory`).
    public init(environment: [String: String]) {
        self.init(directory: ConfigDirectory.url(environment: environment))
    }

    init(directory: URL) {
        self.directory = directory
    }

    /// `recent-peers`.
    public var file: URL { directory.appendingPathComponent("recent-peers") }

    /// The entries, oldest first; empty when there is no usable file.
    ///
    /// Opened without following a symbolic link and without blocking (a FIFO planted in its place held the open
    /// until someone wrote to it); only a regular file is read.
    public func load() -> [Entry] {
        guard let bytes = PrivateFile.read(file.path, limit: 256 * 1024) else { return [] }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Entry.self, from: Data($0)) }
            .filter { $0.device != nil }
    }

    /// Adds `entry` as the newest (dropping an older entry of the same device), keeping the newest `capacity`; false
    /// when it was not recorded: a device new to the file from an address that had a device recorded within
    /// `newDeviceInterval` before `entry.at`. A new device from an address holding `perAddress` entries replaces
    /// the oldest of them. The same device again is always recorded (its link's newer code).
    @discardableResult
    public func record(_ entry: Entry) throws -> Bool {
        var entries = load()
        let isNew = !entries.contains { $0.deviceID == entry.deviceID }
        entries.removeAll { $0.deviceID == entry.deviceID }
        if isNew, let address = Self.addressKey(entry.address) {
            let fromThere = entries.filter { Self.addressKey($0.address) == address }
            if let newest = fromThere.map(\.at).max(), entry.at.timeIntervalSince(newest) < Self.newDeviceInterval {
                return false
            }
            if fromThere.count >= Self.perAddress, let oldest = fromThere.min(by: { $0.at < $1.at }) {
                entries.removeAll { $0.deviceID == oldest.deviceID }
            }
        }
        entries.append(entry)
        entries = Array(entries.suffix(Self.capacity))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var data = Data()
        for entry in entries {
            data.append(try encoder.encode(entry))
            data.append(UInt8(ascii: "\n"))
        }
        try ConfigDirectory.create(directory)
        let temporary = directory.appendingPathComponent(
            ".recent-peers.\(getpid()).\(String(UInt64.random(in: 0...UInt64.max), radix: 16))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError.failure("could not create \(temporary.path)") }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
        } catch {
            unlink(temporary.path)
            throw CLIError.failure("could not write \(temporary.path): \(error.localizedDescription)")
        }
        guard rename(temporary.path, file.path) == 0 else {
            unlink(temporary.path)
            throw CLIError.failure("could not replace \(file.path)")
        }
        return true
    }

    /// What counts as one address for the bounds of `record`: the host of `host:port` (IPv4), or the first 64 bits of
    /// an IPv6 host (`[host]:port`; one machine has a whole /64 to pick from); nil when there is none.
    static func addressKey(_ address: String?) -> String? {
        guard var host = address, !host.isEmpty else { return nil }
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") {
            host = String(host[host.index(after: host.startIndex)..<end])
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            host = String(host[..<colon])
        }
        if let percent = host.firstIndex(of: "%") { host = String(host[..<percent]) }
        var ipv6 = in6_addr()
        if host.contains(":"), inet_pton(AF_INET6, host, &ipv6) == 1 {
            let prefix = withUnsafeBytes(of: ipv6) { Array($0.prefix(8)) }
            return prefix.map { String($0, radix: 16) }.joined(separator: ".") + "/64"
        }
        return host
    }

    /// Records a peer whose link's pairing code was shown (`ferry receive` calls it for links it accepted and showed
    /// with their code, never for links it refused by itself), now, within the bounds of `record`; a failure to
    /// write is ignored (the file only proposes, and a receiver must not stop over it).
    public func note(_ peer: PeerInfo, at now: Date = Date()) {
        try? record(
            Entry(
                deviceID: peer.deviceID.hex, name: peer.displayName, code: peer.pairingCode,
                address: peer.address?.description, at: now))
    }

    /// The newest entries whose name reads as `name` (`DisplayNameMatch`) or whose device ID starts with it.
    public func entries(matching name: String) -> [Entry] {
        let found = load().reversed().filter { entry in
            DisplayNameMatch.same(entry.name, name)
                || (name.unicodeScalars.filter { $0 != "-" }.count >= PeerTarget.minimumPrefixLength
                    && entry.device?.hasPrefix(name) == true)
        }
        return Array(found)
    }
}
