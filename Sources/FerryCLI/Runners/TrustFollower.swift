import FerrySession
import FerryWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps a running session's trusted peers equal to the trusted-peers file, so that a receiver left running (a
/// service) takes a peer pinned with `ferry trust add` in another terminal at once, and stops trusting one removed
/// with `ferry trust remove`, without a restart.
///
/// Why polling: the file is replaced by a rename (`TrustStore`), which an inotify watch on the file itself does not
/// follow, and the config directory may not exist yet when the receiver starts. A `stat` every second is cheap; the
/// file is re-read only when its inode, size or modification time changed.
struct TrustFollower: Sendable {
    /// How often the file is checked.
    static let interval = Duration.seconds(1)

    let store: TrustStore

    /// What changed in one reload.
    struct Change: Equatable, Sendable {
        var added: [TrustedPeer] = []
        var removed: [DeviceID: String] = [:]
        var isEmpty: Bool { added.isEmpty && removed.isEmpty }
    }

    /// The file's identity, nil when there is none.
    func stamp() -> [Int]? {
        var status = stat()
        guard stat(store.file.path, &status) == 0 else { return nil }
        return [
            Int(status.st_ino), Int(status.st_size), Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec),
        ]
    }

    /// The difference between `current` (what the session trusts) and `pinned` (the file's entries).
    static func change(from current: [DeviceID: String], to pinned: [TrustedPeer]) -> Change {
        var change = Change()
        let wanted = Dictionary(pinned.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        for peer in pinned where current[peer.deviceID] != peer.name {
            if wanted[peer.deviceID] == peer { change.added.append(peer) }
        }
        for (id, name) in current where wanted[id] == nil {
            change.removed[id] = name
        }
        return change
    }

    /// Follows the file until cancelled: applies each change to `session` and reports it; a file that cannot be
    /// read or parsed is reported once per change of the file and changes nothing (the session keeps what it had).
    func follow(session: Session, report: @escaping @Sendable (Result<Change, Error>) -> Void) -> Task<Void, Never> {
        Task {
            // Nothing seen yet: the first look compares the file with the session at once, so that a change made
            // between the receiver's start-up load and this task's start is applied too (its stamp is already the
            // new one, and comparing stamps alone would miss it until the file changed again).
            var last: [Int]?? = .none
            var first = true
            while !Task.isCancelled {
                if !first { try? await Task.sleep(for: Self.interval) }
                first = false
                let now = stamp()
                guard now != last else { continue }
                last = now
                do {
                    // Against what the session trusts now: a pin this process made itself (`a` at a prompt) is
                    // already there and is no change.
                    let change = Self.change(from: await session.trustedPeers, to: try store.load())
                    guard !change.isEmpty else { continue }
                    for peer in change.added {
                        await session.trust(peer.deviceID, name: peer.name)
                    }
                    for id in change.removed.keys {
                        await session.untrust(id)
                    }
                    report(.success(change))
                } catch {
                    report(.failure(error))
                }
            }
        }
    }
}
