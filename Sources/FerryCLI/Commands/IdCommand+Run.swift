import FerrySecurity
import FerryWire

extension IdCommand {
    /// Prints the device ID (creating the identity on first use), the fingerprint LocalSend peers see (likewise),
    /// the display name and the config directory.
    public func run(context: CommandContext) async throws -> ExitCode {
        let deviceID = try Self.deviceID(environment: context.environment)
        let localSend = try DeviceIdentityStore(environment: context.environment).loadLocalSendIdentity().fingerprint
        let name = global.displayName
        let directory = ConfigDirectory.url(environment: context.environment).path
        if json {
            // The same first keys, in the same order, as `trust list --json` gives each pinned peer.
            let line = JSONLine(
                event: JSONEvents.Id.identity,
                [
                    "deviceID": .string(deviceID.description),
                    "hex": .string(deviceID.hex),
                    "name": .string(name),
                    "configDirectory": .string(directory),
                    "localSendFingerprint": .string(localSend.description),
                ])
            context.stdout.writeLine(line.text)
        } else {
            context.stdout.write(
                """
                Device ID:  \(deviceID)
                LocalSend:  \(localSend)
                Name:       \(TerminalText.escape(name))
                Config:     \(TerminalText.escape(directory))

                """)
        }
        return .success
    }

    /// This install's device ID, created on first use: the one place that knows where the identity comes from.
    static func deviceID(environment: [String: String]) throws -> DeviceID {
        try DeviceIdentityStore(environment: environment).load()
    }
}
