import FerrySecurity
import Synchronization

/// Device identities for in-process tests: one per name, made once per test process (Ed25519 keys are cheap, but
/// a stable identity per name lets tests compare device IDs across sessions).
public enum TestIdentity {
    private static let cache = Mutex<[String: DeviceIdentity]>([:])

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
