import FerrySecurity
import Synchronization

/// Device identities for in-process tests: one per name, made once per test process (Ed25519 keys are cheap, but
/// a stable identity per name lets tests compare device IDs across sessions).
public enum TestIdentity {
    private static let cache = Mutex<[String: DeviceIdentity]>([:])

    /// The handshake timeout of in-process test sessions: a liveness bound, not the production default (10 s). At
    /// the start of the full suite, hundreds of tests begin at once on the 2-core test machine and every task there
    /// stalled for about 12 s (a CI run: tests of every kind took 12-13 s), so a test's own TLS handshake could time
    /// out (`PrepareAllTests`, "timed out (handshake)"). Tests of the timeout itself set theirs.
    public static let handshakeTimeout: Duration = .seconds(120)

    /// The identity for `name`, the same object on every call.
    public static func named(_ name: String) -> DeviceIdentity {
        cache.withLock { identities in
            if let identity = identities[name] { return identity }
            guard let identity = try? DeviceIdentity.generate() else {
                preconditionFailure("OpenSSL could not generate an Ed25519 key")
            }
            identities[name] = identity
            return identity
        }
    }
}
