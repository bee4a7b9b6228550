import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// What a LocalSend peer that registered with us (`POST /api/localsend/v2/register`) presented: the JSON it sent,
/// and who it is as TLS saw it. The discovery side records it; the server answers with our device info.
public struct LocalSendRegistration: Sendable, Equatable {
    /// The register body as sent (alias, model, type, port, protocol, its claimed fingerprint: none of it identity).
    public var device: LocalSendDevice
    /// The SHA-256 of the client certificate it presented: its identity; nil when it presented none.
    public var certificateFingerprint: LocalSendFingerprint?
    /// Its IP address as the socket reported it.
    public var address: String

    /// A registration with the given fields.
    public init(device: LocalSendDevice, certificateFingerprint: LocalSendFingerprint?, address: String) {
        self.device = device
        self.certificateFingerprint = certificateFingerprint
        self.address = address
    }
}

/// How a `LocalSendServer` listens, what it tells peers about itself, and its bounds (docs/SECURITY.md, "LocalSend
/// server").
public struct LocalSendServerConfiguration: Sendable {
    /// LocalSend's port: the apps send to it unless an announcement said otherwise.
    public static let defaultPort: UInt16 = 53317

    /// The TCP port (0: any, for tests).
    public var port: UInt16
    /// The IPv4 addresses to listen on (empty: all of them).
    public var addresses: [IPv4Address]
    /// Our info as `/info` and `/register` answer it (alias, version, model, type, fingerprint, port, protocol).
    public var device: LocalSendDevice
    /// The PIN a sender must give with `prepare-upload` (nil: none).
    public var pin: String?
    /// The session machine's bounds (files per session, consent and idle timeouts).
    public var sessionLimits: LocalSendReceiver.Limits
    /// Connections served at once; one more is closed at once (TCP accepted, nothing read).
    public var maxConnections: Int
    /// How long a connection may take from accept to the end of a request's head (the TLS handshake included).
    public var headerTimeout: Duration
    /// How long a connection may stay silent between requests, or in the middle of a body.
    public var idleTimeout: Duration
    /// Whether a device ID is pinned in the trust store (called for each new session's peer).
    public var isTrusted: @Sendable (DeviceID) -> Bool
    /// Called for every valid `register` request (the discovery side fills it with
    /// `LocalSendDiscovery.registerReceived`): its device answers 200, its refusal 400 with the refusal's
    /// description. Nil (no discovery runs): 200 with `device`.
    public var onRegister:
        (@Sendable (LocalSendRegistration) async -> Result<LocalSendDevice, LocalSendDiscovery.RegisterRefusal>)?
    /// Diagnostics (level, text), as `TransferConfiguration.log`.
    public var log: (@Sendable (Int, String) -> Void)?

    /// A configuration with the given fields; the defaults are the bounds docs/SECURITY.md names.
    public init(
        port: UInt16 = LocalSendServerConfiguration.defaultPort, addresses: [IPv4Address] = [],
        device: LocalSendDevice, pin: String? = nil,
        sessionLimits: LocalSendReceiver.Limits = LocalSendReceiver.Limits(), maxConnections: Int = 32,
        headerTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        isTrusted: @escaping @Sendable (DeviceID) -> Bool = { _ in false },
        onRegister: (
            @Sendable (LocalSendRegistration) async -> Result<LocalSendDevice, LocalSendDiscovery.RegisterRefusal>
        )? = nil,
        log: (@Sendable (Int, String) -> Void)? = nil
    ) {
        self.port = port
        self.addresses = addresses
        self.device = device
        self.pin = pin
        self.sessionLimits = sessionLimits
        self.maxConnections = maxConnections
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.isTrusted = isTrusted
        self.onRegister = onRegister
        self.log = log
    }

    /// Our device as LocalSend peers see it: `alias` (ferry's display name), protocol 2.1 over HTTPS on `port`,
    /// model "ferry", type "headless", the LocalSend certificate's fingerprint, and that we take files.
    public static func device(alias: String, fingerprint: LocalSendFingerprint, port: UInt16) -> LocalSendDevice {
        LocalSendDevice(
            alias: alias, version: "2.1", deviceModel: "ferry", deviceType: "headless",
            fingerprint: fingerprint.description, port: Int(port), scheme: "https", download: false)
    }
}

/// Why a `LocalSendServer` could not start.
public enum LocalSendServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Something else holds the port (a LocalSend app on this machine, most likely).
    case portInUse(UInt16)
    /// Another failure of the listening socket or the TLS context.
    case cannotListen(String)

    /// One line for people: which port, and the likely reason.
    public var description: String {
        switch self {
        case .portInUse(let port):
            "LocalSend port \(port) is in use (a LocalSend app on this machine?)"
        case .cannotListen(let why): "cannot serve LocalSend peers: \(why)"
        }
    }
}
