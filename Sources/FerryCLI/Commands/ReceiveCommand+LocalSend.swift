import FerryLocalSend
import FerrySecurity
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
        guard status.st_mode & S_IROTH == 0 else {
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

    /// Starts the LocalSend server beside ferry's own protocol; nil (with one line saying why) when the port is
    /// taken or it cannot start: ferry's own protocol goes on.
    func startLocalSend(
        reactor: Reactor, run: TransferSession, pin: String?, context: CommandContext, reporter: TransferReporter
    ) async -> LocalSendServer? {
        guard localSend else { return nil }
        let identity: LocalSendIdentity
        do {
            identity = try DeviceIdentityStore(environment: context.environment).loadLocalSendIdentity()
        } catch {
            context.stderr.writeLine("LocalSend: \(error): going on with ferry's own protocol")
            return nil
        }
        let trustStore = TrustStore(environment: context.environment)
        let configuration = LocalSendServerConfiguration(
            port: localSendPort,
            device: LocalSendServerConfiguration.device(
                alias: run.session.configuration.displayName, fingerprint: identity.fingerprint, port: localSendPort),
            pin: pin,
            isTrusted: { id in (try? trustStore.entry(for: id)) != nil },
            log: run.session.configuration.log)
        do {
            return try LocalSendServer.start(
                reactor: reactor, engine: run.engine, identity: identity, configuration: configuration)
        } catch {
            context.stderr.writeLine("\(error): going on with ferry's own protocol")
            return nil
        }
    }
}
