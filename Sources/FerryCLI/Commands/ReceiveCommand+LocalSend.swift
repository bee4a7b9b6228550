import FerryLocalSend
import FerrySecurity
import FerrySession
import FerrySystem
import FerryTransfer
import FerryWire
import Foundation

extension ReceiveCommand {
    /// The PIN of `--pin-file`: the file's first line, trimmed. Refused when others can read the file (a PIN
    /// anyone on the machine can read protects nothing), when it is empty, or longer than 256 bytes.
    static func readPin(_ path: String) throws -> String {
        let shown = TerminalText.excerpt(path)
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw CLIError.failure("--pin-file \(shown): \(String(cString: strerror(errno)).lowercased())")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw CLIError.failure("--pin-file \(shown): not a regular file")
        }
        // Group members are other users too (as for the key files: KeyFile refuses any group or other bit).
        guard status.st_mode & (S_IRGRP | S_IROTH) == 0 else {
            throw CLIError.failure(
                "--pin-file \(shown): other users can read it (mode \(String(status.st_mode & 0o777, radix: 8)));"
                    + " make it private with chmod 600 \(shown)")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096,
            let text = String(data: data, encoding: .utf8)
        else {
            throw CLIError.failure("--pin-file \(shown): cannot read it as UTF-8 text of at most 4096 bytes")
        }
        let pin = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !pin.isEmpty, pin.utf8.count <= 256 else {
            throw CLIError.failure("--pin-file \(shown): its first line must hold a PIN of 1 to 256 bytes")
        }
        return pin
    }

    /// The PIN of `--ask-pin`: typed twice at the terminal without echo (one prompt reader, as send's PIN prompts),
    /// the same bounds as `--pin-file`'s. Before anything is served, so no offer prompt competes for the line.
    /// - Throws: `CLIError.usage` without a terminal (say `--pin-file`); `CLIError.failure` for an empty, too long
    ///   or mistyped (the two differ) PIN, or input that ended.
    static func askPin(context: CommandContext) async throws -> String {
        guard context.isStdinTerminal, context.isStderrTerminal else {
            throw CLIError.usage(
                "--ask-pin asks on a terminal and there is none; give the PIN in a private file with --pin-file FILE")
        }
        let prompts = LocalSendPinPrompts(say: { context.stderr.writeLine($0) })
        guard let first = await prompts.ask("PIN LocalSend senders must give (not shown):"),
            let second = await prompts.ask("The same PIN again:")
        else {
            throw CLIError.failure("--ask-pin: the input ended before a PIN was typed twice; nothing was served")
        }
        guard first == second else {
            throw CLIError.failure("--ask-pin: the two PINs differ; nothing was served (run it again)")
        }
        guard !first.isEmpty, first.utf8.count <= 256 else {
            throw CLIError.failure("--ask-pin: a PIN is 1 to 256 bytes; nothing was served")
        }
        return first
    }

    /// The LocalSend side of a receive: the HTTPS server, and the discovery that announces it and answers
    /// announcements (nil when discovery could not start: apps that know the address can still send).
    struct LocalSendReceiving: Sendable {
        let server: LocalSendServer
        let discovery: LocalSendDiscovery?
        /// The hash of our LocalSend certificate (what peers see as our fingerprint).
        let ownFingerprint: DeviceID

        /// What identifies `peer`, a LocalSend sender, to a person: its certificate hash, ours (for the Verify
        /// page's text), and its model, type and address when it registered with that same certificate (a
        /// `verified` record of discovery: what it wrote in JSON, under a key TLS proved).
        func contact(for peer: PeerInfo) async -> LocalSendContact {
            var contact = LocalSendContact(
                alias: peer.displayName, fingerprint: peer.deviceID, ownFingerprint: ownFingerprint)
            let key = LocalSendVerification.fingerprint(peer.deviceID)
            if let record = await discovery?.devices[key], record.verified, record.certificateHash == peer.deviceID {
                contact.deviceModel = record.deviceModel
                contact.deviceType = record.deviceType
                contact.address = record.address.hostDescription
            }
            return contact
        }

        /// Stops announcing, then serving.
        func stop() async {
            await discovery?.stop()
            await server.stop()
        }
    }

    /// Where LocalSend is served, from `--interface` (`chosen`) and the interfaces there are.
    struct LocalSendPlacement: Equatable {
        /// The addresses the server binds (empty: all).
        var addresses: [IPv4Address]
        /// Whether discovery runs (a chosen interface other than loopback, or none chosen).
        var discovery: Bool

        /// Nil when LocalSend stays off without a word: only loopback chosen and no `--localsend-port` (no phone
        /// reaches loopback, and tests on one host must not fight over port 53317), or no chosen interface has an
        /// IPv4 address. With `--localsend-port` and only loopback, the server binds loopback's address (for tests
        /// by hand) and discovery stays off. Otherwise the server binds the chosen interfaces' addresses (all when
        /// none is chosen).
        static func of(chosen: [String], portGiven: Bool, interfaces: [NetworkInterface]) -> LocalSendPlacement? {
            guard !chosen.isEmpty else { return LocalSendPlacement(addresses: [], discovery: true) }
            let named = interfaces.filter { chosen.contains($0.name) }
            let lan = named.contains { !$0.isLoopback }
            guard lan || portGiven else { return nil }
            var addresses: [IPv4Address] = []
            for interface in named {
                if let address = interface.ipv4, !addresses.contains(address) { addresses.append(address) }
            }
            return addresses.isEmpty ? nil : LocalSendPlacement(addresses: addresses, discovery: lan)
        }
    }

    /// Starts the LocalSend server beside ferry's own protocol, and LocalSend discovery beside it with the same
    /// device object (so that announcements, `register` answers and `/info` agree); the server's `register` route
    /// goes to the discovery's table. Nil (with one line to `warn` saying why) when the port is taken or the server
    /// cannot start: ferry's own protocol goes on. When only discovery cannot start, one line says so and the server
    /// runs. `warn` gets each line to say (`sayLocalSend` says them after the first line).
    func startLocalSend(
        reactor: Reactor, run: TransferSession, pin: String?, context: CommandContext, warn: (String) -> Void
    ) async -> LocalSendReceiving? {
        guard localSend,
            let placement = LocalSendPlacement.of(
                chosen: global.interfaces, portGiven: localSendPort != nil,
                interfaces: (try? NetworkInterface.all()) ?? [])
        else { return nil }
        let localSendPort = self.localSendPort ?? LocalSendServerConfiguration.defaultPort
        let identity: LocalSendIdentity
        do {
            identity = try DeviceIdentityStore(environment: context.environment).loadLocalSendIdentity()
        } catch {
            warn("LocalSend: \(error): going on with ferry's own protocol")
            return nil
        }
        let device = LocalSendServerConfiguration.device(
            alias: run.session.configuration.displayName, fingerprint: identity.fingerprint, port: localSendPort)
        var presence = LocalSendDiscovery.Configuration(
            alias: device.alias, serverPort: localSendPort, deviceType: device.deviceType ?? "headless",
            interfaces: global.interfaces.isEmpty ? nil : global.interfaces)
        presence.device = device
        var discovery: LocalSendDiscovery?
        do {
            if placement.discovery {
                discovery = try LocalSendDiscovery(configuration: presence, identity: identity, reactor: reactor)
            }
        } catch {
            // `--interface` naming no LAN interface leaves discovery nowhere to be: asked for, not a problem.
            if !(error.noInterface && !global.interfaces.isEmpty) {
                warn("\(error.description); LocalSend apps that know this address can still send here")
            }
        }
        let trustStore = TrustStore(environment: context.environment)
        var configuration = LocalSendServerConfiguration(
            port: localSendPort, addresses: placement.addresses, device: device, pin: pin,
            isTrusted: { id in (try? trustStore.entry(for: id)) != nil }, log: run.session.configuration.log)
        if let registry = discovery {
            configuration.onRegister = { @Sendable registration in
                await registry.registerReceived(
                    device: registration.device, clientCertificate: registration.certificateFingerprint,
                    address: registration.address)
            }
        }
        let server: LocalSendServer
        do {
            server = try LocalSendServer.start(
                reactor: reactor, engine: run.engine, identity: identity, configuration: configuration)
        } catch {
            await discovery?.stop()
            warn("\(error): going on with ferry's own protocol")
            return nil
        }
        await discovery?.start()
        return LocalSendReceiving(server: server, discovery: discovery, ownFingerprint: identity.fingerprint.deviceID)
    }

    /// Says the lines `startLocalSend` gave, after the first line (`listening` leads `--json` output): with `--json`
    /// each as an `error` event on stdout (which holds nothing but JSON lines; `ferry peers --json` says them so),
    /// else as it is on stderr.
    func sayLocalSend(_ warnings: [String], reporter: TransferReporter) {
        for warning in warnings {
            if json {
                reporter.emit(JSONLine(event: JSONEvents.Transfers.error, ["message": .string(warning)]))
            } else {
                reporter.say(warning)
            }
        }
    }
}
