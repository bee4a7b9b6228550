import FerryLocalSend
import FerryStateMachines
import FerrySystem
import FerryWire

/// Starts LocalSend discovery for a command (`--no-localsend` turns it off): our device on LocalSend's multicast
/// group and the LocalSend devices around. When it cannot start (the port held by a LocalSend app on this machine,
/// no interface with multicast) it says so in one line and the command goes on with ferry's own protocol.
enum LocalSendPresence {
    /// The running discovery, or nil after the one line on stderr (or a JSON `error` line when `json`).
    static func start(
        global: GlobalOptions, context: CommandContext, reactor: Reactor, serverPort: UInt16 = LocalSendDiscovery.port,
        deviceType: String = "desktop", warn: (String) -> Void
    ) async throws -> LocalSendDiscovery? {
        let identity = try DeviceIdentityStore(environment: context.environment).loadLocalSendIdentity()
        let configuration = LocalSendDiscovery.Configuration(
            alias: global.displayName, serverPort: serverPort, deviceType: deviceType,
            interfaces: global.interfaces.isEmpty ? nil : global.interfaces)
        do {
            let discovery = try LocalSendDiscovery(configuration: configuration, identity: identity, reactor: reactor)
            await discovery.start()
            return discovery
        } catch {
            // `--interface lo` (as ferry's own tests run) leaves LocalSend nowhere to be: asked for, not a problem.
            if error.noInterface && !global.interfaces.isEmpty { return nil }
            warn(error.description + "; going on with ferry peers only (--no-localsend hides this)")
            return nil
        }
    }
}

/// How LocalSend devices look beside ferry peers.
enum LocalSendFormat {
    typealias Record = LocalSendDeviceTable<SocketAddress>.Record

    /// The fingerprint's first 8 hex digits: the start of what the app's Verify page shows.
    static func shortFingerprint(_ record: Record) -> String {
        String(record.key.prefix(8))
    }

    /// What the device is, in words: `LocalSend: MODEL, TYPE`, and why ferry cannot use it when it cannot.
    static func kind(_ record: Record) -> String {
        let what = [record.deviceModel, record.deviceType].compactMap { $0 }.filter { !$0.isEmpty }
        var text =
            "LocalSend" + (what.isEmpty ? "" : ": " + what.map { TerminalText.escape($0) }.joined(separator: ", "))
        if let reason = record.unusableReason { text += " (not usable: \(reason))" }
        return text
    }

    /// A row under `PeerFormat.header`: alias, short fingerprint, address, state, kind.
    static func row(_ record: Record, lost: Bool) -> String {
        PeerFormat.columns(
            TerminalText.escape(record.alias), shortFingerprint(record),
            record.address.withPort(record.port).description, lost ? "unavailable" : "available", kind(record))
    }

    /// The fields of the `localsend` JSON event.
    static func json(_ record: Record, lost: Bool) -> [(String, JSONValue)] {
        [
            ("name", .string(record.alias)),
            ("fingerprint", .string(record.key)),
            ("deviceModel", record.deviceModel.map { .string($0) } ?? .null),
            ("deviceType", record.deviceType.map { .string($0) } ?? .null),
            ("version", record.version.map { .string($0) } ?? .null),
            ("address", .string(record.address.withPort(record.port).description)),
            ("protocol", .string(record.scheme)),
            ("state", .string(lost ? "unavailable" : "available")),
            ("usable", .bool(record.isUsable)),
            ("verified", .bool(record.verified)),
        ]
    }
}
