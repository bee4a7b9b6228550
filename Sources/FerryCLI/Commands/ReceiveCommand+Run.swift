import FerryLocalSend
import FerrySession
import FerrySystem
import FerryStateMachines
import FerryTransfer
import FerryWire
import Foundation

extension ReceiveCommand {
    /// Prepares the directory, advertises, and receives until Ctrl-C (or the first transfer with `--once`).
    public func run(context: CommandContext) async throws -> ExitCode {
        if clearStaged {
            return try clearStaged(context: context)
        }
        // The PIN first: a missing terminal or an unreadable file is said before anything is created.
        var pin = try pinFile.map(Self.readPin)
        if askPin { pin = try await Self.askPin(context: context) }
        // A directory named with --into is created if missing, but not its parents (a typo in a parent would
        // otherwise make a new tree somewhere unexpected); the default download directory is created whole.
        let directory = try Self.prepareDirectory(
            into.map { Self.absolute($0) } ?? DownloadDirectory.resolve(environment: context.environment),
            createParents: into == nil)
        expireStaged(in: directory, context: context)
        let reactor: Reactor
        do {
            reactor = try Reactor()
        } catch {
            throw CLIError.failure("could not start the event loop: \(error)")
        }
        defer { reactor.shutdown() }
        let asking = accept == .ask && context.isStdinTerminal
        // With no one to ask, the engine accepts pinned peers' offers and refuses the others itself (as "nobody to
        // ask"), so that no answer has to travel through this loop.
        let policy: OfferPolicy = accept == .ask ? (asking ? .ask : .trusted) : .all
        let setup = try SessionSetup(
            global: global, context: context, mode: .server, acceptPolicy: accept == .trusted ? .trusted : .all,
            transfersEnabled: true)
        let trustStore = TrustStore(environment: context.environment)
        let recentPeers = RecentPeers(environment: context.environment)
        let reporter = TransferReporter(context: context, json: json, logsAcceptedOffers: !asking)
        let configuration = engineConfiguration(directory: directory, policy: policy, log: setup.configuration.log)
        let once = self.once
        let code = try await TransferSession.run(
            setup: setup, engine: configuration, reporter: reporter, reactor: reactor, forwardEvents: true,
            onSessionEvent: { event in
                // Who connects shows its pairing code at once, before any offer, so that both people compare it
                // while the sender is asked to confirm; whom the session refused by itself leaves one line. Swarm
                // links (other receivers of a broadcast) are no one a person connected: `linkUp` leaves them out.
                switch event {
                case .peerStateChanged(let peer, .connected, _):
                    reporter.linkUp(peer)
                    // For `ferry trust add NAME` here, when the peer only sends and cannot be reached (`RecentPeers`):
                    // only a link whose code `linkUp` just showed (a refused link showed none to anyone).
                    if !peer.isSwarmLink, !peer.isTrusted, peer.pairingCode != nil { recentPeers.note(peer) }
                case .connectionDenied(let peer, let reason, let detail):
                    reporter.connectionRefused(peer, reason: reason, detail: detail)
                default: break
                }
            }
        ) { run in
            var localSendWarnings: [String] = []
            let localSend = await startLocalSend(reactor: reactor, run: run, pin: pin, context: context) {
                localSendWarnings.append($0)
            }
            await announce(run, directory: directory, context: context, reporter: reporter, localSend: localSend)
            sayLocalSend(localSendWarnings, reporter: reporter)
            // The LocalSend server stops before the engine does, so that its session ends as the peers' do.
            do {
                let code = try await receiving()
                await localSend?.stop()
                return code
            } catch {
                await localSend?.stop()
                throw error
            }
            func receiving() async throws -> ExitCode {
                let directoryCheck = Self.stopWhenDirectoryIsGone(directory, run: run, reporter: reporter)
                defer { directoryCheck?.cancel() }
                let trustFollower = Self.followTrustedPeers(trustStore, run: run, reporter: reporter)
                defer { trustFollower.cancel() }
                if accept == .trusted, setup.configuration.trustedDevices.isEmpty {
                    context.stderr.writeLine(
                        "Note: no peer is trusted yet, so every peer will be refused; pin one with 'ferry trust add <id>"
                            + " --name <name>' (its 'ferry id' prints the ID; a LocalSend device: 'ferry trust add"
                            + " --localsend <fingerprint>'), or answer 'a' to a --accept ask prompt")
                }
                if accept == .ask, !asking {
                    context.stderr.writeLine(
                        "Note: stdin is not a terminal, so no one can be asked: offers from trusted peers are accepted,"
                            + " every other is refused (use --accept all to accept them all)")
                }
                let (updates, prompt) = AsyncStream.makeStream(of: OfferPrompt.Update.self)
                let prompter =
                    asking
                    ? Task {
                        await OfferPrompt(show: { reporter.say(lines: $0) }).run(
                            updates: updates, lines: StandardInputLines.stream()
                        ) { offer, answer in
                            if answer == .always {
                                do {
                                    try await Self.trustAlways(
                                        offer.peer, in: trustStore, session: run.session, reporter: reporter)
                                } catch {
                                    reporter.say(
                                        "could not trust \(TerminalText.escape(offer.peer.displayName)): "
                                            + TerminalText.escape("\(error)"))
                                }
                            }
                            await run.engine.respond(
                                to: offer.transferID, from: offer.peer.peerID, accept: answer != .deny)
                        }
                    } : nil
                defer {
                    prompt.finish()
                    prompter?.cancel()
                }
                guard let events = run.events else { return ExitCode.failure }
                // Prompts are a person's attention: offers become prompts at the rate the session allows connection
                // prompts, so a stranger may not fill the terminal with offers either.
                let promptRate = setup.configuration.connectionRequestRate
                let promptRatePerPeer = setup.configuration.connectionRequestRatePerPeer
                var prompts = RequestLimiter<DeviceID>(global: promptRate, perRequester: promptRatePerPeer, now: .now)
                for await event in events {
                    switch event {
                    case .offerReceived(let offer) where offer.peer.isTrusted:
                        reporter.say(
                            "\(OfferPrompt.text(for: offer)[0].dropLast()): accepted, a trusted peer (key verified)")
                        await run.engine.respond(to: offer.transferID, from: offer.peer.peerID, accept: true)
                    case .offerReceived(let offer) where asking && prompts.admit(offer.peer.deviceID, now: .now) != nil:
                        // The sender hears the true reason (offer reason 8), not "denied by the user".
                        let limits = "at most \(promptRatePerPeer) from one peer, \(promptRate) from all"
                        let why = "denied without asking, too many offers (\(limits))"
                        reporter.noteDenial(offer.transferID, from: offer.peer, reason: why)
                        await run.engine.respond(
                            to: offer.transferID, from: offer.peer.peerID, accept: false, reason: .tooManyOffers,
                            detail: limits)
                    case .offerReceived(let offer) where offer.peer.protocolName == OfferPrompt.localSend:
                        prompt.yield(.offer(offer, await localSend?.contact(for: offer.peer)))
                    case .offerReceived(let offer):
                        prompt.yield(.offer(offer))
                    case .finished(let outcome) where outcome.direction == .receiving:
                        prompt.yield(
                            .gone(outcome.transferID, outcome.peer.peerID, reason: outcome.failure ?? "finished"))
                        if once {
                            await Self.linger(until: outcome.peer.peerID, leaves: run.tracker)
                            return outcome.isSuccess ? ExitCode.success : .failure
                        }
                    case .denied(let transferID, let peer, .receiving, let reason):
                        prompt.yield(.gone(transferID, peer.peerID, reason: reason))
                        if once {
                            await Self.linger(until: peer.peerID, leaves: run.tracker)
                            return ExitCode.failure
                        }
                    default:
                        continue
                    }
                }
                try Task.checkCancellation()
                return ExitCode.failure
            }
        }
        reporter.board?.clear()
        return code
    }

    /// The engine's settings for this command line: where files go, how offers are answered, whether this receiver
    /// takes part in a broadcast's swarm (`--no-relay`), and text messages in memory.
    func engineConfiguration(
        directory: String, policy: OfferPolicy, log: (@Sendable (Int, String) -> Void)? = nil
    ) -> TransferConfiguration {
        var configuration = TransferConfiguration(
            receiveDirectory: directory, offerPolicy: policy, askTimeout: .seconds(askTimeout), log: log)
        configuration.relay = relay
        // Text messages (send --text) are shown; kept as files only in a directory the user named.
        configuration.memoryDelivery = MemoryDelivery(
            maxSize: UInt64(Payload.maxMessageBytes), mediaTypes: [Payload.messageMediaType], alsoPublish: into != nil)
        return configuration
    }

    /// The first line: where this process listens, for people (stderr) or scripts (stdout, JSON).
    private func announce(
        _ run: TransferSession, directory: String, context: CommandContext, reporter: TransferReporter,
        localSend: LocalSendReceiving?
    ) async {
        let port = await run.session.listenPort
        let name = run.session.configuration.displayName
        if json {
            reporter.emit(
                JSONLine(
                    event: JSONEvents.Transfers.listening,
                    [
                        "port": .int(Int(port)), "directory": .string(directory), "name": .string(name),
                        "peerID": .string(run.session.localPeerID.description),
                        "deviceID": .string(run.session.configuration.deviceID.description),
                        "session": .string(run.session.configuration.sessionID),
                        "localSendPort": localSend.map { .int(Int($0.server.port)) } ?? .null,
                    ]))
        } else {
            // A journal (a service, stdin from /dev/null) has no Ctrl-C: the hint is for a person at a terminal.
            let stop = context.isStdinTerminal || context.isStderrTerminal ? "; Ctrl-C to stop" : ""
            context.stderr.writeLine(
                "receiving into \(TerminalText.escape(directory)) as \(TerminalText.escape(name)) (port \(port))"
                    + stop)
            if let localSend {
                context.stderr.writeLine("LocalSend apps can send here too, on TCP port \(localSend.server.port)")
            }
        }
    }

    /// What `always` (`a`) does: pins the peer in the trust store, and trusts it in the running session under the
    /// name the store has, so that the trust follower sees nothing to change.
    static func trustAlways(
        _ peer: PeerInfo, in store: TrustStore, session: Session, reporter: TransferReporter
    ) async throws {
        var name = peer.displayName
        if peer.protocolName == OfferPrompt.localSend {
            name = try Self.pinLocalSend(peer, in: store, reporter: reporter)
        } else {
            try store.pin(peer.deviceID, name: name)
        }
        await session.trust(peer.deviceID, name: name)
    }

    /// Pins a LocalSend device after `always` (`LocalSendVerification.pin`); returns the name it pinned.
    @discardableResult
    static func pinLocalSend(_ peer: PeerInfo, in store: TrustStore, reporter: TransferReporter) throws -> String {
        // The stand-in name of a device without an alias is not its alias (a device that calls itself so is pinned
        // with an empty alias too: the stand-in is no name to tell devices apart by anyway).
        let shown = peer.displayName == LocalSendServer.unnamedDeviceName ? "" : peer.displayName
        return try LocalSendVerification.pin(peer.deviceID, alias: shown, in: store) { reporter.say($0) }
    }

    /// How long `--once` waits for the sender to hang up before closing the session itself.
    static let lingerTime = Duration.seconds(2)

    /// Waits until `peerID` is no longer connected, at most `lingerTime`.
    ///
    /// The sender learns how its transfer ended from the last frame this side sent (a file result or the denial);
    /// closing the session at once would race that frame with the goodbye, and a sender that sees the link go
    /// first reports a lost link although every file arrived. The sender hangs up when it is done, which ends
    /// the wait.
    static func linger(until peerID: PeerID, leaves tracker: PeerTracker) async {
        let deadline = ContinuousClock.now + lingerTime
        while ContinuousClock.now < deadline, !Task.isCancelled {
            let generation = await tracker.generation
            guard await tracker.peers[peerID]?.state == .connected else { return }
            await tracker.waitForChange(after: generation, until: deadline)
        }
    }

    /// `path` made absolute against the working directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Creates the directory if missing and checks that it is a writable directory; returns its path. A symbolic
    /// link given as the directory (a `~/Downloads` that points to another disk) is the user's own choice: it is
    /// resolved here, once, and the directory it names is the one received into (names inside it are never
    /// followed, `ReceiveDirectory`).
    static func prepareDirectory(_ path: String, createParents: Bool = true) throws -> String {
        var link = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
            guard let resolved = realpath(path, nil) else {
                let problem = String(cString: strerror(errno))
                throw CLIError.failure(
                    "cannot receive into \(TerminalText.excerpt(path)): it is a symbolic link to something that does"
                        + " not exist (\(problem)); create its target, or choose another directory with --into")
            }
            defer { free(resolved) }
            return try prepareDirectory(String(cString: resolved), createParents: createParents)
        }
        let shown = TerminalText.excerpt(path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CLIError.failure("cannot receive into \(shown): it is not a directory")
            }
        } else {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if !createParents, !FileManager.default.fileExists(atPath: parent) {
                throw CLIError.failure(
                    "cannot receive into \(shown): \(TerminalText.excerpt(parent)) does not exist; create it first, or choose another "
                        + "directory with --into")
            }
            // The directories about to be made, the receive directory first: each is a name in its parent that must
            // survive a crash as the files published in it do, so each parent is synced once they exist.
            var missing: [String] = []
            var walk = URL(fileURLWithPath: path)
            while !FileManager.default.fileExists(atPath: walk.path), walk.path != "/" {
                missing.append(walk.path)
                walk = walk.deletingLastPathComponent()
            }
            // mkdir(2) itself where no parents are made: its errno names the problem, where Foundation's error may
            // only say "The operation could not be completed".
            var failure: String?
            if createParents {
                do {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                } catch {
                    failure = Self.reason(error)
                }
            } else if mkdir(path, 0o755) != 0, errno != EEXIST {
                failure = String(cString: strerror(errno))
            }
            if let failure {
                throw CLIError.failure(
                    "cannot create the directory \(shown) to receive into: \(failure); choose another with --into")
            }
            do {
                for created in missing { try ReceiveDirectory.syncParent(of: created) }
            } catch {
                throw CLIError.failure("cannot receive into \(shown): \(error); choose another with --into")
            }
        }
        guard access(path, W_OK | X_OK) == 0 else {
            // EACCES: "Permission denied"; EROFS: "Read-only file system".
            let reason = String(cString: strerror(errno)).lowercased()
            throw CLIError.failure("cannot receive into \(shown): \(reason); choose another with --into")
        }
        return path
    }

    private static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return error.localizedDescription
    }
}
