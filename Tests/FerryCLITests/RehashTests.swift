import Testing

@testable import FerryCLI
@testable import FerryTransfer

/// `ferry send` keeps chunk digests in the user's cache directory, and `--rehash` makes it hash every file again
/// (keeping the new digests): what reaches the engine.
@Suite struct RehashTests {
    @Test func theDigestCacheFollowsRehashAndTheEnvironment() throws {
        let send = try #require(try parseCommand(["send", "a.txt", "--to", "bob"]) as? SendCommand)
        #expect(send.usesKeptDigests)
        let cache = try #require(send.engineConfiguration(environment: ["HOME": "/home/zoe"]).digestCache)
        #expect(cache.directory == "/home/zoe/.cache/ferry/digests" && cache.readsEntries)
        let xdg = send.engineConfiguration(environment: ["HOME": "/home/zoe", "XDG_CACHE_HOME": "/var/c"])
        #expect(xdg.digestCache?.directory == "/var/c/ferry/digests")
        #expect(send.engineConfiguration(environment: [:]).digestCache == nil, "no home: nothing kept")
        #expect(send.engineConfiguration().digestCache == nil)

        let rehash = try #require(try parseCommand(["send", "a.txt", "--to", "bob", "--rehash"]) as? SendCommand)
        #expect(!rehash.usesKeptDigests)
        let rehashing = try #require(rehash.engineConfiguration(environment: ["HOME": "/home/zoe"]).digestCache)
        #expect(!rehashing.readsEntries, "hashes every file, and still keeps what it hashed")
    }
}
