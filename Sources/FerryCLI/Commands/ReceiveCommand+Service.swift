import FerryTransfer
import FerryWire

extension ReceiveCommand {
    /// Stops the receiver when its directory disappears: says so, ends every transfer ("shutting down"; each
    /// unfinished file failed first, since its staged data went with the directory: nothing is said to be kept), and
    /// lets `run` return status 1.
    ///
    /// Why stop rather than recreate: a directory removed on purpose (or a disk unmounted) should not come back
    /// behind the user's back, and every offer after it would fail anyway. Status 1 hands the decision to whoever
    /// started the receiver: a systemd service with `Restart=on-failure` starts it again, and the normal start
    /// creates the directory (the default download directory with its parents, an `--into` directory when its
    /// parent exists); a person sees the message. Returns the checking task (cancel it when the receiver ends), nil
    /// when the directory is already gone.
    static func stopWhenDirectoryIsGone(_ directory: String, run: TransferSession, reporter: TransferReporter)
        -> Task<Void, Never>?
    {
        DirectoryPresence(path: directory)?.watch { reason in
            reporter.failure(
                "the receive directory \(reason); stopping. Start ferry receive again to create it "
                    + "(a service with Restart=on-failure does)")
            // Said to the senders without the path (this machine's, not theirs to know).
            await run.engine.stopDiscardingStaged(reason: .shuttingDown, detail: "the receive directory was removed")
        }
    }

    /// Applies changes of the trusted-peers file while the receiver runs (`ferry trust add` / `remove` in another
    /// terminal), one line (or JSON event) per change; returns the following task.
    static func followTrustedPeers(_ store: TrustStore, run: TransferSession, reporter: TransferReporter)
        -> Task<Void, Never>
    {
        TrustFollower(store: store).follow(session: run.session) { result in
            switch result {
            case .success(let change):
                reporter.trustChanged(
                    added: change.added.map { ($0.name, $0.deviceID) },
                    removed: change.removed.map { ($0.value, $0.key) })
            case .failure(let error):
                reporter.say(
                    "the trusted peers were not reloaded: " + TerminalText.escape("\(error)")
                        + "; the receiver keeps the peers it trusted")
            }
        }
    }
}
