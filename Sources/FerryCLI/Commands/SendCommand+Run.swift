import FerryLocalSend
import FerrySession
import FerrySystem
import FerryTransfer
import FerryWire
import Foundation

extension SendCommand {
    /// Checks the files, finds and connects the peers, sends one transfer to all of them, prints the summary.
    public func run(context: CommandContext) async throws -> ExitCode {
        // Files first: a typo in a path is reported before anything touches the network (or stdin is read).
        var context = context
        let collected = try await collectSources(context: &context)
        defer { withExtendedLifetime(collected.spool) {} }
        let sources = collected.files
        let picking = targets.isEmpty && !all
        if picking, !(context.isStdinTerminal && context.isStderrTerminal) {
            throw Self.pickerNeedsATerminal
        }
        let items = Self.items(files: sources, text: text)
        let totalBytes = collected.bytes &+ UInt64(text?.utf8.count ?? 0)
        let setup = try SessionSetup(
            global: global, context: context, mode: .client, acceptPolicy: .none, transfersEnabled: true)
        let reporter = TransferReporter(
            context: context, json: json, confirmsCodes: Self.confirmsCodes(context, trustedOnly: trustedOnly),
            summaryFollows: true)
        let configuration = engineConfiguration(log: setup.configuration.log, environment: context.environment)
        let pin = try pinFile.map(ReceiveCommand.readPin)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let summary = try await TransferSession.run(
            setup: setup, engine: configuration, reporter: reporter, reactor: reactor
        ) { run in
            let localSend =
                picking ? nil : try await startLocalSend(reactor: reactor, context: context, reporter: run.reporter)
            defer { if let discovery = localSend?.discovery { Task { await discovery.stop() } } }
            let deadline = ContinuousClock.now + .seconds(wait)
            let trusted = localSend == nil ? [] : try TrustStore(environment: context.environment).load()
            let split = try await splitTargets(
                targets, localSend: localSend, run: run, trusted: trusted, until: deadline)
            let sendsToFerry = picking || all || !split.ferry.isEmpty
            // The items are opened, stat'ed and sniffed while the peers are found and connected (for 1000 small
            // files about as long as connecting to one by address: 20-45 ms), and before any pairing code is asked
            // about. Not while a person picks the peers, which can take minutes: what is prepared is what is offered,
            // and a file edited meanwhile would fail as changed during the send.
            async let early: PreparedItems? =
                picking || !sendsToFerry ? nil : run.engine.prepare(items, folders: collected.folders)
            var (connected, unconnected): ([PeerInfo], [TransferSummary.PeerResult]) = ([], [])
            if sendsToFerry {
                (connected, unconnected) = try await connectPeers(
                    run, targets: split.ferry, context: context, localSendDevices: localSend?.discovery != nil)
            }
            var localSendPeers = split.localSend
            if all { localSendPeers += await allLocalSendPeers(localSend) }
            if all, connected.isEmpty, unconnected.isEmpty, localSendPeers.isEmpty {
                throw CLIError.failure(
                    "no receiving peer was found in session \(TerminalText.escape(global.session)) within "
                        + "\(wait.shortDescription) s; is `ferry receive` running there, with the same --session?")
            }
            var localSendFailures: [TransferSummary.PeerResult] = []
            if let localSend, !localSendPeers.isEmpty {
                (localSendPeers, localSendFailures) = try await confirmLocalSend(
                    localSendPeers, localSend: localSend, run: run, context: context)
            }
            let localSendItems = localSendPeers.isEmpty ? [] : try await Self.localSendItems(sources, text: text)
            var prepared: PreparedItems?
            do {
                if let items = try await early {
                    prepared = items
                } else if sendsToFerry, !connected.isEmpty {
                    prepared = try await run.engine.prepare(items, folders: collected.folders)
                }
            } catch let error as TransferError {
                throw CLIError.failure(error.description)
            }
            let (peers, failures) = try await confirmPeers(connected, failures: unconnected, run, context: context)
            let started = ContinuousClock.now
            var results = failures
            var elapsed: Duration?
            let localSendTask: Task<[TransferSummary.PeerResult], Never>? =
                localSendPeers.isEmpty
                ? nil
                : Task { [localSendPeers, context] in
                    await sendLocalSend(
                        localSendItems, to: localSendPeers, localSend: localSend!, run: run, context: context,
                        pin: pin)
                }
            if !peers.isEmpty, let prepared {
                run.reporter.waitingForAnswer(peers)
                do {
                    let outcomes = try await withTaskCancellationHandler {
                        try await run.engine.send(prepared, to: peers.map(\.peerID))
                    } onCancel: {
                        localSendTask?.cancel()
                    }
                    results = outcomes.map(TransferSummary.PeerResult.init) + failures
                    elapsed = TransferSummary.transferTime(outcomes)
                } catch {
                    // Its cancel requests go out and its uploads end before the command returns (and the reactor
                    // and discovery go).
                    localSendTask?.cancel()
                    _ = await localSendTask?.value
                    if let error = error as? TransferError { throw CLIError.failure(error.description) }
                    throw error
                }
            }
            if let localSendTask {
                let sent = await withTaskCancellationHandler {
                    await localSendTask.value
                } onCancel: {
                    localSendTask.cancel()
                }
                results += sent
                try Task.checkCancellation()
            }
            results += localSendFailures
            var summary = TransferSummary(
                files: items.count, messages: text == nil ? 0 : 1, bytes: totalBytes,
                seconds: TransferFormat.seconds(elapsed ?? ContinuousClock.now - started), peers: results)
            summary.emptyFolders = collected.folders.count
            await localSend?.discovery?.stop()  // before the reactor goes (the deferred stop covers errors)
            return summary
        }
        reporter.board?.clear()
        if json {
            reporter.emit(summary.jsonLine)
        } else {
            context.stderr.write(summary.text)
        }
        return summary.isSuccess ? .success : .failure
    }

    /// The engine's settings for this command line: its compression, whether receivers may relay (`--no-relay`), and
    /// where the digests of files sent are kept (`$XDG_CACHE_HOME/ferry/digests` of `environment`, not read with
    /// `--rehash`; none without an environment).
    func engineConfiguration(
        log: (@Sendable (Int, String) -> Void)? = nil, environment: [String: String]? = nil
    ) -> TransferConfiguration {
        var configuration = TransferConfiguration(compression: compression, log: log)
        configuration.relay = relay
        if let directory = environment.flatMap(DigestCache.standardDirectory) {
            configuration.digestCache = DigestCache(directory: directory, readsEntries: usesKeptDigests)
        }
        return configuration
    }

    /// The peers to send to, connected: the `--to` targets, every receiver (`--all`), or the picker's choice.
    private func connectPeers(
        _ run: TransferSession, targets: [PeerTarget], context: CommandContext, localSendDevices: Bool
    ) async throws
        -> (peers: [PeerInfo], failures: [TransferSummary.PeerResult])
    {
        let resolver = TargetResolver(run: run, sessionID: global.session)
        let deadline = ContinuousClock.now + .seconds(wait)
        if all {
            let found = await resolver.collectAll(until: deadline, quiet: Self.allQuietPeriod)
            try Task.checkCancellation()
            // LocalSend devices heard may be all there is: the caller says so when there is none either.
            if found.peers.isEmpty, found.failures.isEmpty, !localSendDevices {
                throw CLIError.failure(
                    "no receiving peer was found in session \(TerminalText.escape(global.session)) within "
                        + "\(wait.shortDescription) s; is `ferry receive` running there, with the same --session?")
            }
            return found
        }
        var chosen = targets
        var resolved: [PeerTarget: PeerInfo] = [:]
        if chosen.isEmpty {
            let picker = PeerPicker(tracker: run.tracker, sink: context.stderr, sessionID: global.session)
            let peers = try await picker.pick(lines: StandardInputLines.stream())
            chosen = peers.map { .name($0.peerID.description) }
            resolved = Dictionary(uniqueKeysWithValues: zip(chosen, peers))
        } else {
            resolved = try await resolver.resolve(chosen, until: deadline, waited: wait)
        }
        let connected = await resolver.connect(chosen, resolved: resolved, until: deadline)
        try Task.checkCancellation()
        return connected
    }

    /// The connected peers that may be sent to: the trusted ones, and (on a terminal) the ones whose pairing code
    /// the person confirmed; with `--trusted-only`, trusted ones only. Every other one is disconnected before
    /// anything is offered to it and gets its failure in the summary.
    /// - Throws: `CLIError.failure` when no peer is left because the person confirmed none; `CancellationError`.
    private func confirmPeers(
        _ peers: [PeerInfo], failures: [TransferSummary.PeerResult], _ run: TransferSession, context: CommandContext
    ) async throws -> (peers: [PeerInfo], failures: [TransferSummary.PeerResult]) {
        let asking = Self.confirmsCodes(context, trustedOnly: trustedOnly)
        guard trustedOnly || asking else { return (peers, failures) }
        let confirmation = PairingConfirmation(show: { run.reporter.say(lines: $0) })
        var kept: [PeerInfo] = []
        var failures = failures
        var declined: [String] = []
        var refused: [(peer: PeerInfo, line: String)] = []
        for peer in peers {
            try Task.checkCancellation()
            if peer.isTrusted {
                kept.append(peer)
                continue
            }
            let name = TerminalText.escape(peer.displayName)
            let failure: String
            if trustedOnly {
                failure =
                    "not trusted here, and --trusted-only sends to trusted receivers only; pin it with 'ferry trust add"
                    + " \(peer.deviceID.shortDescription)' while it runs 'ferry receive'"
            } else {
                let answer = await confirmation.ask(peer)
                try Task.checkCancellation()
                switch answer {
                case .yes:
                    kept.append(peer)
                    continue
                case .always:
                    kept.append(peer)
                    do {
                        try TrustStore(environment: context.environment).pin(peer.deviceID, name: peer.displayName)
                        await run.session.trust(peer.deviceID, name: peer.displayName)
                        run.reporter.say("\(name) is trusted from now on (ferry trust list)")
                    } catch {
                        run.reporter.say("could not trust \(name): " + TerminalText.escape("\(error)"))
                    }
                    continue
                case .no, .timedOut, .inputEnded:
                    failure = PairingConfirmation.refusal(answer)
                    declined.append(name)
                }
            }
            await run.session.disconnect(peer.peerID)
            refused.append((peer, "\(peer.displayName): \(failure)"))
            failures.append(
                TransferSummary.PeerResult(name: peer.displayName, peerID: peer.peerID.description, failure: failure))
        }
        // As for connections that failed: said before the transfer only when one goes ahead, else the summary (or
        // the error below) is the one line that says it.
        if run.reporter.json || !kept.isEmpty {
            for (peer, line) in refused { run.reporter.failure(line, peer: peer) }
        }
        if kept.isEmpty, !declined.isEmpty, failures.count == declined.count {
            throw CLIError.failure(
                "nothing was sent: the pairing code of \(declined.joined(separator: ", ")) was not confirmed; send"
                    + " again and answer y when the receiver shows the same code")
        }
        return (kept, failures)
    }

    /// Whether the person is asked to confirm each untrusted receiver's pairing code: on a terminal, unless
    /// `--trusted-only` refuses those receivers anyway.
    static func confirmsCodes(_ context: CommandContext, trustedOnly: Bool) -> Bool {
        context.isStdinTerminal && context.isStderrTerminal && !trustedOnly
    }

    /// The size of a regular file, 0 when it cannot be read (the engine reports that file's failure).
    static func size(of path: String) -> UInt64 {
        var status = stat()  // stat(2): FileManager's attributesOfItem also reads owner names and extended attributes
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return 0 }
        return UInt64(status.st_size)
    }
}
