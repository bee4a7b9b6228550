import FerrySecurity
import FerrySession
import FerryWire
import Foundation

extension TrustCommand.Add {
    /// `ferry trust add NAME` for a peer that connected to this install's `ferry receive` (a sender, which accepts
    /// no connections and so cannot be reached to compare a code now): shows its device ID and the pairing code of
    /// its last link, which the receiver showed and the sender's person was asked about, and pins it on a yes.
    ///
    /// The comparison is the same as over the network, made with what both screens showed then: the sender's
    /// `Does dave show 461 214?` (or its `ferry id`) against the line shown here. A receiver that runs as a service
    /// follows the trusted-peers file, so the next link of that peer is trusted without a restart.
    ///
    /// The pin takes the name the person typed (`typed`), not the one the peer chose for itself (which only has to
    /// read the same, `DisplayNameMatch`), unless `--name` says otherwise or the person typed an ID.
    func pinRecentPeer(_ entry: RecentPeers.Entry, device: DeviceID, typed: String, context: CommandContext)
        async throws -> ExitCode
    {
        let shown = TerminalText.escape(entry.name)
        let name = self.name ?? Self.pinName(typed: typed, chosen: entry.name)
        let label = TrustCommand.label(TrustedPeer(deviceID: device, name: name, added: .now))
        if try TrustStore(environment: context.environment).entry(for: device) != nil, self.name == nil {
            context.stdout.writeLine("Already trusted: \(label).")
            return .success
        }
        let when = entry.at.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
        let code = entry.code.map { " with the pairing code \(PairingCode.readable($0))" } ?? ""
        context.stderr.writeLine(
            "\(shown) (device \(device)) connected to this install's 'ferry receive' at \(when) UTC\(code).")
        // The code was on the sender's screen then, not now: the person compares with what they saw (or the ID).
        let check =
            entry.code.map {
                "the code its screen showed when it sent (its 'ferry send' asked whether the receiver shows "
                    + "\(PairingCode.readable($0))), or "
            } ?? ""
        context.stderr.writeLine(
            "Is it \(shown)? Compare \(check)what its 'ferry id' prints: \(device). Trust it? [y/N] "
                + "(y trusts it as '\(TerminalText.escape(name))' from now on)")
        var answer = false
        for await line in StandardInputLines.stream() {
            answer = OfferPrompt.answer(line) != .deny
            break
        }
        try Task.checkCancellation()
        guard answer else {
            throw CLIError.failure(
                "\(shown) was not trusted; run it again and answer y when what it showed matches the line above")
        }
        _ = try TrustStore(environment: context.environment).pin(device, name: name)
        context.stdout.writeLine("Trusted \(label).")
        return .success
    }

    /// The name to pin a peer under, without `--name`: what the person typed when it names the peer (it reads as
    /// the name the peer chose, `DisplayNameMatch`), else (an ID was typed) the name the peer chose.
    static func pinName(typed: String, chosen: String) -> String {
        DisplayNameMatch.same(typed, chosen) ? typed : chosen
    }
}
