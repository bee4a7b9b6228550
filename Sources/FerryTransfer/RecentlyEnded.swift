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

/// A role's records by key, and the keys of those that ended here recently: the table `IncomingTransfers` and
/// `SwarmMemberships` keep theirs in.
///
/// A class, touched only on the engine's actor: `with` takes a record out for the length of its body, and the body
/// may reach this table again (another record, the same one's absence); a struct's mutating `with` would hold an
/// exclusive access to the whole table that long, and such a reach would trap.
final class RecordTable<Key: Hashable & Sendable, Record> {
    private var records: [Key: Record] = [:]
    private var ended = RecentlyEnded<Key>()

    subscript(key: Key) -> Record? {
        get { records[key] }
        _modify { yield &records[key] }
    }

    /// Every record (a copy: the table may change while the caller goes through it).
    var all: [Key: Record] { records }

    /// Runs `body` on a record in place (taken out of the table meanwhile, so that what it holds is not copied on
    /// every mutation); nil when there is none.
    @discardableResult
    func with<T>(_ key: Key, _ body: (inout Record) throws -> T) rethrows -> T? {
        guard var record = records.removeValue(forKey: key) else { return nil }
        defer { records[key] = record }
        return try body(&record)
    }

    /// The record's end: it goes, and its key is remembered as ended.
    func end(_ key: Key) -> Record? {
        guard let record = records.removeValue(forKey: key) else { return nil }
        ended.insert(key)
        return record
    }

    /// Whether `key` ended here recently.
    func hasEnded(_ key: Key) -> Bool { ended.contains(key) }
}
