import FerrySecurity
import FerryWire
import Foundation

/// This install's identity: an Ed25519 key and self-signed certificate in `identity.pem` in the configuration
/// directory (`$XDG_CONFIG_HOME/ferry`, else `~/.config/ferry`), created on first use, mode 0600 in a 0700
/// directory. The device ID is the SHA-256 of the certificate.
struct DeviceIdentityStore {
    let directory: URL

    init(environment: [String: String]) {
        directory = ConfigDirectory.url(environment: environment)
    }

    var file: URL { directory.appendingPathComponent(DeviceIdentity.fileName) }

    /// The key and certificate, created when missing.
    func loadIdentity() throws -> DeviceIdentity {
        do {
            return try DeviceIdentity.loadOrCreate(directory: directory.path)
        } catch {
            throw CLIError.failure(error.description)
        }
    }

    /// The device ID (the identity is created when missing).
    func load() throws -> DeviceID {
        try loadIdentity().deviceID
    }

    /// The RSA key and certificate LocalSend peers see (`localsend-identity.pem` beside `identity.pem`), created
    /// when missing.
    func loadLocalSendIdentity() throws -> LocalSendIdentity {
        do {
            return try LocalSendIdentity.loadOrCreate(directory: directory.path)
        } catch {
            throw CLIError.failure(error.description)
        }
    }
}
