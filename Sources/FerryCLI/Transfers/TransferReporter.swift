import FerrySecurity
import FerrySession
import FerryTransfer
import FerryWire
import Synchronization

/// Everything `send`, `receive` and `watch` print about transfers: JSON lines, text lines, progress bars.
///
/// The three commands drive the same engine and report the same events, so they print them the same way: with
/// `--json` one object per engine event on stdout (numbers raw: bytes, seconds, bytes per second); otherwise one
/// line per finished file or failure on stderr, above live bars when stderr is a terminal. Every string that
/// came from a peer (names, file names, reasons) is escaped before it reaches a terminal.
final class TransferReporter: Sendable {
    let context: CommandContext
    let json: Bool
    /// Live bars, when stderr is a terminal (and is not where the JSON goes).
    let board: ProgressBoard?
    /// Transfers that were denied, whose "finished" would only repeat the denial in text.
    private let denied = Mutex<Set<ProgressBoard.Key>>([])
    /// Why the command itself denied an offer, where that says more than the engine's reason (the prompt rate).
    private let denialReasons = Mutex<[ProgressBoard.Key: String]>([:])
    /// What a receiver of a broadcast said it served when its transfer ended: its `swarmEnded` line is shown only
    /// when it served more after that.
    private let servedWhenFinished = Mutex<[ProgressBoard.Key: UInt64]>([:])
    /// Ticks the board once a second, so that a bar with no progress says that it is stalled.
    private let ticker: Task<Void, Never>?

    /// Whether the command asks the person to confirm each untrusted peer's pairing code right after its
    /// `connected` line ("Does bob show 123 456?"): then that line only gives the code, and the question says
    /// what to do with it.
    let confirmsCodes: Bool

    /// Whether each offer accepted without asking anyone (`receive --accept all`, `trusted`, or `ask` with no
    /// terminal: a service) gets a line, `alice offers 3 files (12.0 MiB): accepted`, so that a log says what was
    /// let in before what arrived. Offers a person answered were shown with their answer already.
    let logsAcceptedOffers: Bool

    /// Whether a summary follows the last transfer's end (`ferry send`): the text line for a send that failed is then
    /// left to the summary when no other send runs, so the last thing said is not said twice.
    let summaryFollows: Bool
    /// Sends started and not yet finished.
    private let runningSends = Mutex<Set<ProgressBoard.Key>>([])

    init(
        context: CommandContext, json: Bool, bars: Bool? = nil, confirmsCodes: Bool = false,
        logsAcceptedOffers: Bool = false, summaryFollows: Bool = false
    ) {
        self.context = context
        self.json = json
        self.confirmsCodes = confirmsCodes
        self.logsAcceptedOffers = logsAcceptedOffers
        self.summaryFollows = summaryFollows
        let wantsBars = bars ?? (context.isStderrTerminal && !(json && context.isStdoutTerminal))
        let board = wantsBars ? ProgressBoard(sink: context.stderr) : nil
        self.board = board
        ticker = board.map { board in
            Task { [weak board] in
                while (try? await Task.sleep(for: .seconds(1))) != nil, let board { board.tick() }
            }
        }
    }

    deinit {
        ticker?.cancel()
    }

    /// Prints a JSON line on stdout.
    func emit(_ line: JSONLine) {
        context.stdout.writeLine(line.text)
    }

    /// Prints text lines on stderr, above the bars if any.
    func say(_ lines: String...) {
        say(lines: lines)
    }

    /// Prints text lines on stderr, above the bars if any.
    func say(lines: [String]) {
        if let board {
            board.print(lines)
        } else {
            context.stderr.write(lines.map { $0 + "\n" }.joined())
        }
    }

    /// A failure to report: a JSON `error` event, or an `Error:` line.
    func failure(_ message: String, peer: PeerInfo? = nil) {
        if json {
            var line = JSONLine(event: JSONEvents.Transfers.error)
            if let peer {
                Self.appendPeer(peer, to: &line)
            }
            line.append("message", .string(message))
            emit(line)
        } else {
            say("Error: " + TerminalText.escape(message))
        }
    }

    /// The process was told to stop by `signal` (SIGTERM: a service manager, `kill`), said before the transfers it
    /// ends are, so that a log shows why they stopped: with `--json` a `stopping` event on stdout (which holds
    /// nothing but JSON lines), else `stopping: SIGTERM` on stderr.
    func stopping(signal: String) {
        if json {
            emit(JSONLine(event: JSONEvents.Transfers.stopping, ["signal": .string(signal)]))
        } else {
            say("stopping: \(signal)")
        }
    }

    /// A connection to a peer is up (sending commands): its pairing code, for the person to compare with the
    /// receiver's screen, unless the peer is trusted (then its key was checked against the pin). Nothing for a swarm
    /// link.
    func connected(_ peer: PeerInfo) {
        guard !peer.isSwarmLink else { return }
        if json {
            var line = JSONLine(event: JSONEvents.Transfers.connected)
            Self.appendPeer(peer, to: &line)
            line.append("address", peer.address.map { .string($0.description) } ?? .null)
            line.append("code", peer.pairingCode.map { .string($0) } ?? .null)
            line.append("trusted", .bool(peer.isTrusted))
            emit(line)
        } else {
            say(Self.pairingLine(peer, confirming: confirmsCodes))
        }
    }

    /// A peer's link is up on the receiving side (`ferry receive`): its pairing code at once, before any offer,
    /// so that both people compare the code while the sender is asked to confirm it. A swarm link (another receiver
    /// of a broadcast, admitted because the sender vouched for it) prints nothing, in text and JSON alike.
    func linkUp(_ peer: PeerInfo) {
        guard !peer.isSwarmLink else { return }
        if json {
            var line = JSONLine(event: JSONEvents.Transfers.connected)
            Self.appendPeer(peer, to: &line)
            line.append("code", peer.pairingCode.map { .string($0) } ?? .null)
            line.append("trusted", .bool(peer.isTrusted))
            emit(line)
        } else {
            let name = TerminalText.escape(peer.displayName)
            if peer.isTrusted {
                say(
                    "\(name) (\(peer.deviceID.shortDescription)) connected: trusted, key verified"
                        + Self.codeAside(peer))
            } else if let code = peer.pairingCode {
                say(
                    "\(name) (device \(peer.deviceID)) connected: pairing code \(PairingCode.readable(code))"
                        + " - \(name) shows the same code unless someone is in between")
            }
        }
    }

    /// The session refused a peer's connection by itself: one line with who it was (the full device ID, to pin
    /// it) and why, or a JSON `refused` event.
    func connectionRefused(_ peer: PeerInfo, reason: DenyReason, detail: String) {
        if json {
            var line = JSONLine(event: JSONEvents.Transfers.refused, ["what": "connection"])
            Self.appendPeer(peer, to: &line)
            line.append("reason", .string(detail.isEmpty ? "\(reason)" : "\(reason): \(detail)"))
            emit(line)
            return
        }
        let why: String
        switch reason {
        case .untrusted: why = "it is not trusted (--accept trusted)"
        case .serverFull: why = "too many peers connected (\(TerminalText.escape(detail)))"
        default: why = TerminalText.escape(detail.isEmpty ? "\(reason)" : "\(reason): \(detail)")
        }
        say(Self.refusalLine("the connection of", peer, why: why, pinHint: reason == .untrusted))
    }

    /// The trusted-peers file changed while the receiver runs: whom it trusts now, and whom no longer; a JSON
    /// `trusted` event with both lists (`name`, `deviceID`).
    func trustChanged(added: [(name: String, id: DeviceID)], removed: [(name: String, id: DeviceID)]) {
        if json {
            func list(_ peers: [(name: String, id: DeviceID)]) -> JSONValue {
                .array(peers.map { .object([("name", .string($0.name)), ("deviceID", .string($0.id.description))]) })
            }
            emit(JSONLine(event: JSONEvents.Transfers.trusted, ["added": list(added), "removed": list(removed)]))
            return
        }
        func names(_ peers: [(name: String, id: DeviceID)]) -> String {
            peers.map { "\(TerminalText.escape($0.name)) (device \($0.id.shortDescription))" }.joined(separator: ", ")
        }
        var parts: [String] = []
        if !added.isEmpty { parts.append("now trusting " + names(added)) }
        if !removed.isEmpty { parts.append("no longer trusting " + names(removed)) }
        say("trusted peers changed: " + parts.joined(separator: "; "))
    }

    /// The offer is on its way to `peers` (sending, after any pairing code was confirmed): until each one answers, a
    /// line below the bars says that ferry waits for it and how long that may take, so that the screen is not blank
    /// while a person there decides. A receiver that asks its person denies the offer by itself when nobody answered
    /// within its `--ask-timeout` (`ReceiveCommand.defaultAskTimeout`, 60 s, unless it was started with another);
    /// one that accepts by itself answers at once and the line gives way to its bar. Only on a terminal (with
    /// bars): a log or a script learns the answer from the `started` or `denied` line that follows.
    func waitingForAnswer(_ peers: [PeerInfo]) {
        guard let board else { return }
        for peer in peers {
            board.note(peer.peerID, Self.waitingLine(peer))
        }
    }

    /// `waiting for alice to accept... (a person asked there has 60 s to answer, by default)`
    static func waitingLine(_ peer: PeerInfo) -> String {
        let timeout = ReceiveCommand.defaultAskTimeout.shortDescription
        return "waiting for \(TerminalText.escape(peer.displayName)) to accept... (a person asked there has \(timeout)"
            + " s to answer, by default)"
    }

    /// Records why the command denied an offer, for the line that reports the denial.
    func noteDenial(_ transferID: TransferID, from peer: PeerInfo, reason: String) {
        denialReasons.withLock { $0[ProgressBoard.Key(transferID: transferID, peerID: peer.peerID)] = reason }
    }

    /// "refused WHAT alice (device AAAQ-...): WHY", with how to pin the peer when it was refused as a stranger.
    /// A LocalSend device is named as one, with its fingerprint as its app shows it and `trust add --localsend`.
    static func refusalLine(_ what: String, _ peer: PeerInfo, why: String, pinHint: Bool) -> String {
        let name = TerminalText.escape(peer.displayName)
        let localSend = peer.protocolName == OfferPrompt.localSend
        let fingerprint = LocalSendVerification.fingerprint(peer.deviceID)
        let who =
            localSend ? "LocalSend device \(name) (fingerprint \(fingerprint))" : "\(name) (device \(peer.deviceID))"
        var line = "refused \(what) \(who): \(why)"
        if pinHint {
            let simple = peer.displayName.allSatisfy {
                $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0))
            }
            let naming = simple && !peer.displayName.isEmpty ? " --name \(peer.displayName)" : ""
            let id = localSend ? "--localsend \(fingerprint)" : "\(peer.deviceID)"
            line += "; to trust it: ferry trust add \(id)\(naming)"
        }
        return line
    }

    /// "bob (ABCD-EFGH): pairing code 123 456 - the receiver shows the same code unless someone is in between",
    /// or "bob (ABCD-EFGH): trusted, key verified".
    ///
    /// With `confirming` (the person is asked next whether bob shows the code), only the code:
    ///
    /// ```
    /// bob (ABCD-EFGH): connected, pairing code 123 456
    /// Does bob show 123 456? [y]es, [n]o, [a]lways (yes, and trust bob from now on)
    /// ```
    static func pairingLine(_ peer: PeerInfo, confirming: Bool = false) -> String {
        let name = TerminalText.escape(peer.displayName)
        if peer.isTrusted {
            return "\(name) (\(peer.deviceID.shortDescription)): trusted, key verified" + codeAside(peer)
        }
        guard let code = peer.pairingCode else { return "\(name) (\(peer.deviceID.shortDescription)): connected" }
        if confirming {
            return "\(name) (\(peer.deviceID.shortDescription)): connected, pairing code \(PairingCode.readable(code))"
        }
        return "\(name) (\(peer.deviceID.shortDescription)): pairing code \(PairingCode.readable(code))"
            + " - the receiver shows the same code unless someone is in between"
    }

    /// After "trusted, key verified": the link's pairing code all the same, since trust is one-way. The peer may
    /// not have pinned this device and then asks its person to compare the code: this screen (or a service's log)
    /// must show it, or that person can never answer yes.
    static func codeAside(_ peer: PeerInfo) -> String {
        guard let code = peer.pairingCode else { return "" }
        let name = TerminalText.escape(peer.displayName)
        return "; pairing code \(PairingCode.readable(code)), if \(name) asks to compare it"
    }

    /// Reports one engine event.
    func report(_ event: TransferEvent) {
        if case .fileFinished(let outcome) = event, let text = Self.message(in: outcome) {
            return reportMessage(outcome, text: text)
        }
        if json {
            emit(Self.jsonLine(for: event))
        }
        switch event {
        case .offerReceived:
            break
        case .started(let transferID, let peer, let direction, let files, let accepted, let resumeOffsets):
            if direction == .receiving, logsAcceptedOffers, !json {
                let offered = files.reduce(UInt64(0)) { $0 &+ $1.size }
                let header = OfferPrompt.text(sender: peer.displayName, files: files, totalBytes: offered)[0]
                say("\(header.dropLast()): " + Self.acceptedText(accepted))
            }
            if direction == .sending {
                runningSends.withLock { _ = $0.insert(ProgressBoard.Key(transferID: transferID, peerID: peer.peerID)) }
            }
            if !json {
                let resuming = InterruptionText.resuming(
                    files: files, accepted: accepted, resumeOffsets: resumeOffsets, direction: direction,
                    peer: peer.displayName)
                if !resuming.isEmpty { say(lines: resuming) }
            }
            let total = zip(files, accepted).reduce(UInt64(0)) { $0 + ($1.1 ? $1.0.size : 0) }
            let done = zip(resumeOffsets, accepted).reduce(UInt64(0)) { $0 + ($1.1 ? $1.0 : 0) }
            board?.update(
                ProgressBoard.Key(transferID: transferID, peerID: peer.peerID),
                ProgressLine(name: peer.displayName, bytesDone: done, totalBytes: total, rate: 0, secondsLeft: nil))
        case .denied(let transferID, let peer, let direction, let reason):
            denied.withLock { _ = $0.insert(ProgressBoard.Key(transferID: transferID, peerID: peer.peerID)) }
            let key = ProgressBoard.Key(transferID: transferID, peerID: peer.peerID)
            let noted = denialReasons.withLock { $0.removeValue(forKey: key) }
            if direction == .sending { board?.removeNote(peer.peerID) }
            guard !json else { return }
            let name = TerminalText.escape(peer.displayName)
            if direction == .sending {
                say("\(name) denied the transfer: \(TerminalText.escape(reason))")
            } else {
                let stranger = reason.hasPrefix("\(OfferDenyReason.nobodyToAsk)")
                say(
                    Self.refusalLine(
                        "a transfer from", peer, why: noted ?? TerminalText.escape(reason), pinHint: stranger))
            }
        case .progress(let progress):
            board?.update(
                ProgressBoard.Key(transferID: progress.transferID, peerID: progress.peer.peerID),
                ProgressLine(progress))
        case .fileFinished(let outcome):
            guard !json else { return }
            say(Self.text(for: outcome))
        case .finished(let outcome):
            let key = ProgressBoard.Key(transferID: outcome.transferID, peerID: outcome.peer.peerID)
            let wasDenied = denied.withLock { $0.remove(key) != nil }
            var lines: [String] = []
            // The summary that follows says how the last send ended: not said twice.
            let lastSend =
                outcome.direction == .sending
                && runningSends.withLock { running in
                    running.remove(key)
                    return running.isEmpty
                }
            // Unless this side was stopped (Ctrl-C, SIGTERM): then no summary comes. (Ended here for another cause,
            // a failed read or a receiver that broke the protocol, a summary does follow.)
            var stoppedHere = false
            if case .cancelledHere(let reason) = outcome.stop {
                stoppedHere = reason == .cancelledByUser || reason == .shuttingDown
            }
            if !json, let failure = outcome.failure, !wasDenied, !(lastSend && summaryFollows && !stoppedHere) {
                lines.append(Self.endText(outcome, failure: failure))
            }
            if !json, let folders = Self.foldersText(for: outcome) { lines.append(folders) }
            if !json, let swarm = Self.swarmText(for: outcome) {
                lines.append(swarm)
                servedWhenFinished.withLock { $0[key] = outcome.servedBytes }
            }
            if let board {
                board.removeNote(outcome.peer.peerID)
                board.remove(key, printing: lines)
            } else if !lines.isEmpty {
                context.stderr.write(lines.map { $0 + "\n" }.joined())
            }
        case .relayerCutOff(let report):
            guard !json else { return }
            say(Self.text(for: report))
        case .swarmEnded(let totals):
            let key = ProgressBoard.Key(transferID: totals.transferID, peerID: totals.sender.peerID)
            let shown = servedWhenFinished.withLock { $0.removeValue(forKey: key) }
            guard !json, totals.relayedBytes > 0 || totals.servedBytes > 0, shown != totals.servedBytes else { return }
            say(Self.text(for: totals))
        }
    }

    /// How a transfer that did not run to its end ended, for its line: `transfer to bob failed: ...`, or for one
    /// stopped with data kept for a resume, `transfer to bob stopped: the receiver shut down at 55.0 MiB of 200 MiB;
    /// it keeps them, send again to resume` (sending) or `transfer from alice stopped (shutting down) at ...; kept
    /// staged for a resume when alice sends again` (receiving).
    static func endText(_ outcome: TransferOutcome, failure: String) -> String {
        let name = TerminalText.escape(outcome.peer.displayName)
        if outcome.direction == .receiving {
            return InterruptionText.receiving(outcome)
                ?? "transfer from \(name) failed: \(TerminalText.escape(failure))"
        }
        let stopped = InterruptionText.sending(
            outcome.stop, failure: failure, done: outcome.bytes &+ outcome.resumedBytes, total: outcome.acceptedBytes,
            kept: outcome.keptBytes)
        return stopped.map { "transfer to \(name) stopped: \($0)" }
            ?? "transfer to \(name) failed: \(TerminalText.escape(failure))"
    }

    /// How much of an offer was accepted, after `alice offers 3 files (12.0 MiB):`: `accepted`, or `accepted 2 of 3`
    /// when some files were not taken.
    static func acceptedText(_ accepted: [Bool]) -> String {
        let taken = accepted.filter { $0 }.count
        return taken == accepted.count ? "accepted" : "accepted \(taken) of \(accepted.count)"
    }

    /// Receiving a folder with empty folders in it: `created 2 empty folders from alice`, and `1 empty folder from
    /// alice could not be created (a file or a symbolic link is in the way; -v shows where)`; nil when there were none.
    static func foldersText(for outcome: TransferOutcome) -> String? {
        guard outcome.direction == .receiving, outcome.emptyFolders + outcome.emptyFoldersFailed > 0 else { return nil }
        func counted(_ count: Int) -> String { count == 1 ? "1 empty folder" : "\(count) empty folders" }
        let name = TerminalText.escape(outcome.peer.displayName)
        var parts: [String] = []
        if outcome.emptyFolders > 0 { parts.append("created \(counted(outcome.emptyFolders)) from \(name)") }
        if outcome.emptyFoldersFailed > 0 {
            parts.append(
                "\(counted(outcome.emptyFoldersFailed)) from \(name) could not be created (a file or a symbolic link "
                    + "is in the way; -v shows where)")
        }
        return parts.joined(separator: "; ")
    }

    /// A receiver cut off from a broadcast's swarm, for a person: who, what it did, and that the files are safe.
    ///
    /// Receiving (this side caught it): `bob is cut off from this broadcast: it sent a chunk that does not match the
    /// sender's digest (nothing of it was kept)`. Sending (a receiver reported it): `bob is cut off from this
    /// broadcast: carol reports that it sent a chunk that does not match the sender's digest; bob gets the rest from
    /// here directly`. The chunk's place (file and chunk index) is in the JSON event and the log, not here: it means
    /// nothing to the person reading, and the text would no longer fit a line.
    static func text(for report: RelayerReport) -> String {
        let offender = TerminalText.escape(report.offender)
        let reason = TerminalText.escape(report.reason)
        guard let reporter = report.reporter else {
            return "\(offender) is cut off from this broadcast: it sent \(reason) (nothing of it was kept)"
        }
        return "\(offender) is cut off from this broadcast: \(TerminalText.escape(reporter)) reports that it sent "
            + "\(reason); \(offender) gets the rest from here directly"
    }

    /// After a broadcast in which this receiver took part: `from alice's broadcast: 48.0 MiB came from other receivers,
    /// 52.0 MiB served to them`; nil outside a swarm (nothing relayed either way) and when sending (the summary says
    /// it for all receivers).
    static func swarmText(for outcome: TransferOutcome) -> String? {
        guard outcome.direction == .receiving, outcome.relayedBytes > 0 || outcome.servedBytes > 0 else { return nil }
        return "from \(TerminalText.escape(outcome.peer.displayName))'s broadcast: "
            + "\(TransferFormat.bytes(outcome.relayedBytes)) came from other receivers, "
            + "\(TransferFormat.bytes(outcome.servedBytes)) served to them"
    }

    /// When this receiver stopped serving the other receivers of a broadcast after its last file: `alice's broadcast
    /// ended here: in all 48.0 MiB came from other receivers, 60.0 MiB served to them`.
    static func text(for totals: SwarmTotals) -> String {
        "\(TerminalText.escape(totals.sender.displayName))'s broadcast ended here: in all "
            + "\(TransferFormat.bytes(totals.relayedBytes)) came from other receivers, "
            + "\(TransferFormat.bytes(totals.servedBytes)) served to them"
    }

    /// `sent photo.jpg to alice (1.2 MiB)`, `received photo (1).jpg from bob (3 B)`,
    /// `photo.jpg: already there at alice (identical, 1.2 MiB)`, or the failure. A text sent with `--text` is no
    /// file to the person who typed it: `sent a message to alice` (its entry's name, `message.txt`, is ferry's).
    static func text(for outcome: FileOutcome) -> String {
        let peer = TerminalText.escape(outcome.peer.displayName)
        if Payload.isMessage(outcome.mediaType, size: outcome.size) {
            // A message that arrived is shown by `reportMessage`; here: sent, or failed either way.
            switch (outcome.direction, outcome.failure) {
            case (.sending, nil): return "sent a message to \(peer)"
            case (.sending, let failure?):
                return "failed to send the message to \(peer): \(TerminalText.escape(failure))"
            case (.receiving, let failure?):
                return "failed to receive the message from \(peer): \(TerminalText.escape(failure))"
            case (.receiving, nil): break
            }
        }
        let name = TerminalText.escape(outcome.fileName)
        let size = TransferFormat.bytes(outcome.size)
        if outcome.failure == nil, outcome.alreadyThere {
            // Nothing new appeared on the receiver: the name already held these bytes (the offered one or a variant).
            let held = outcome.publishedName ?? outcome.fileName
            let as_ = held == outcome.fileName ? "" : " as \(TerminalText.escape(held))"
            return outcome.direction == .sending
                ? "\(name): already there\(as_) at \(peer) (identical, \(size))"
                : "\(name) from \(peer): already there\(as_) (identical, \(size))"
        }
        let resumed = InterruptionText.resumedAside(outcome)
        switch (outcome.direction, outcome.failure) {
        case (.sending, nil):
            return "sent \(name) to \(peer) (\(size)\(resumed))"
        case (.receiving, nil):
            let published = TerminalText.escape(outcome.publishedName ?? outcome.fileName)
            // A newer version from `ferry watch` put in place of the one it delivered before.
            let replacing = outcome.replaced ? ", replacing the version \(peer) sent before" : ""
            // A peer of another protocol that gave no digest: said, as nothing but the size was checked.
            let checked = outcome.verification == .size ? ", checked by its size only: the sender gave no digest" : ""
            return "received \(published) from \(peer) (\(size)\(resumed))\(replacing)\(checked)"
        case (.sending, let failure?):
            return "failed to send \(name) to \(peer): \(TerminalText.escape(failure))"
        case (.receiving, let failure?):
            return "failed to receive \(name) from \(peer): \(TerminalText.escape(failure))"
        }
    }
}
