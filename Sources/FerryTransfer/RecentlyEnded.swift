/// The keys of things that ended here recently (transfers, swarms), the last `capacity` of them: frames of theirs
/// still in flight are dropped instead of being taken for a protocol violation, and the memory of them stays bounded
/// whatever a peer does.
struct RecentlyEnded<Key: Hashable & Sendable>: Sendable {
    /// How many ended keys each role remembers.
    static var capacity: Int { 256 }

    private var keys: Set<Key> = []
    private var order: [Key] = []

    func contains(_ key: Key) -> Bool { keys.contains(key) }

    /// Remembers `key`, forgetting the oldest past `capacity`.
    mutating func insert(_ key: Key) {
        keys.insert(key)
        order.append(key)
        if order.count > Self.capacity { keys.remove(order.removeFirst()) }
    }
}
