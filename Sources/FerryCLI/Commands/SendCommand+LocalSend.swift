import FerryLocalSend
import FerrySecurity
import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTransfer
import FerryWire
import Glibc

/// `ferry send` to LocalSend receivers (docs/LOCALSEND.md, "Sending (ferry to a phone)"): discovery beside the
/// session, `--to` matched against LocalSend devices too, each receiver confirmed (pinned, or its fingerprint
/// compared by a person on a terminal), then each sent to by its own `LocalSendSender`, beside the engine's send
/// to ferry peers.
extension SendCommand {
    /// A LocalSend receiver chosen for this send.
    struct LocalSendPeer: Sendable {
        /// Its alias, or the address typed when nothing announced one.
        var name: String
        /// Where it is and the certificate it must present.
        var destination: LocalSendDestination
        /// Whether discovery heard it (else it was typed as HOST:PORT and its certificate learned by a handshake).
        var discovered: Bool
        /// Why it cannot be sent to, when it cannot (encryption off).
        var unusable: String?
    }

    /// The LocalSend side of a send: our identity and sender, and discovery when it runs.
    struct LocalSendSending: Sendable {
        let discovery: LocalSendDiscovery?
        let sender: LocalSendSender
        let identity: LocalSendIdentity
        /// When discovery started: devices answer our first announcement within about a second.
        let started = ContinuousClock.now
        /// How long after `started` a name is held before it is sent to the one kind of peer it matched
        /// (`localSendSettle`, or `FERRY_LOCALSEND_SETTLE_MS`: tests on a loaded machine lengthen it so that both
        /// kinds are heard for sure).
        var settle = SendCommand.localSendSettle
    }

    /// How long after discovery started a name that matches only a ferry peer, or only a LocalSend device, is held,
    /// so that a peer of the other kind answering to it too is heard (and the name refused as ambiguous) rather than
    /// missed: the apps and localsendd answer our first announcement within a second, ferry peers their beacons'
    /// probe as fast.
    static let localSendSettle = Duration.milliseconds(1500)

    /// Starts LocalSend discovery (unless `--no-localsend`; quietly none with only loopback chosen) and loads our
    /// LocalSend identity; nil with `--no-localsend`.
    func startLocalSend(reactor: Reactor, context: CommandContext, reporter: TransferReporter) async throws
        -> LocalSendSending?
    {
        guard localSend else { return nil }
        let identity = try DeviceIdentityStore(environment: context.environment).loadLocalSendIdentity()
        let discovery = try await LocalSendPresence.start(global: global, context: context, reactor: reactor) {
            reporter.failure($0)
        }
        let device = discovery?.ownDevice ?? LocalSendSender.device(alias: global.displayName, identity: identity)
        var sending = LocalSendSending(
            discovery: discovery, sender: LocalSendSender(identity: identity, device: device), identity: identity)
        if let text = context.environment["FERRY_LOCALSEND_SETTLE_MS"], let milliseconds = Int(text),
            (0...600_000).contains(milliseconds)
        {
            sending.settle = .milliseconds(milliseconds)
        }
        return sending
    }

    /// Whether `address` is a LocalSend receiver's (its port is LocalSend's, 53317).
    static func isLocalSendAddress(_ address: SocketAddress) -> Bool {
        address.port == LocalSendDiscovery.port
    }

    /// The LocalSend devices `text` names: by alias (exactly, or ignoring case), or by the start of the fingerprint
    /// (at least 4 hex digits).
    static func localSendMatches(_ text: String, in devices: [LocalSendFormat.Record]) -> [LocalSendFormat.Record] {
        let exact = devices.filter { $0.alias == text }
        if !exact.isEmpty { return exact }
        let folded = devices.filter { $0.alias.lowercased() == text.lowercased() }
        if !folded.isEmpty { return folded }
        let hex = text.uppercased().filter { $0 != "-" && $0 != ":" }
        guard hex.count >= 4, hex.allSatisfy(\.isHexDigit) else { return [] }
        return devices.filter { $0.key.hasPrefix(hex) }
    }

    /// Splits `targets` into ferry targets and LocalSend receivers. HOST:53317 is a LocalSend receiver; a name is
    /// matched against both the session's peers and the LocalSend devices discovery heard, until one of them
    /// answers to it or `deadline` passes (then it is left to the ferry resolver, which says it was not found).
    /// A name pinned here (a pinned peer's name, or a pinned LocalSend device's alias: `trusted`) names that device
    /// only, as `PeerTarget.match(in:pinned:)` does for ferry peers: a LocalSend device answering to it with another
    /// certificate is a stranger, never chosen; while only strangers answer the name waits for the pinned device,
    /// and at `deadline` the send fails saying so (`pinnedAbsentText`).
    /// - Throws: `CLIError.failure` when a name matches a ferry peer and a LocalSend device, or several devices, or
    ///   only strangers answer to a pinned name.
    func splitTargets(
        _ targets: [PeerTarget], localSend: LocalSendSending?, run: TransferSession, trusted: [TrustedPeer],
        until deadline: ContinuousClock.Instant
    ) async throws -> (ferry: [PeerTarget], localSend: [LocalSendPeer]) {
        guard let localSend else { return (targets, []) }
        var ferry: [PeerTarget] = []
        var chosen: [LocalSendPeer] = []
        var names: [PeerTarget] = []
        for target in targets {
            switch target {
            case .address(let text, let address) where Self.isLocalSendAddress(address):
                chosen.append(await addressPeer(text, address, localSend, until: deadline))
            case .address: ferry.append(target)
            case .name: names.append(target)
            }
        }
        guard let discovery = localSend.discovery, !names.isEmpty else { return (ferry + names, chosen) }
        // Why a pinned name is still waiting: only strangers answer to it (said once, and the failure at the end).
        var strangers: [PeerTarget: String] = [:]
        var said: Set<String> = []
        while !names.isEmpty {
            let generation = await run.tracker.generation
            let devices = await discovery.devices.values.filter { !Self.isFerry($0) }
            let candidates = await run.tracker.reachable.map(PeerCandidate.init)
            let pinned = await run.session.trustedPeers
            var waiting: [PeerTarget] = []
            strangers = [:]
            for target in names {
                let owners = Set(Self.pinnedOwners(of: target.text, in: trusted))
                var matches = Self.localSendMatches(target.text, in: devices)
                let ferryMatch = target.match(in: candidates, pinned: pinned)
                var ferryMatched: Bool
                switch ferryMatch {
                case .none, .pinnedAbsent: ferryMatched = false
                case .one, .ambiguous, .pinned: ferryMatched = true
                }
                if !owners.isEmpty {
                    // Pinned: that device only, whatever it calls itself now; the others answering are strangers.
                    let answering = matches.filter { !($0.certificateHash.map(owners.contains) ?? false) }
                    matches = devices.filter { $0.certificateHash.map(owners.contains) ?? false }
                    switch ferryMatch {
                    case .one(let peer), .pinned(let peer, _): ferryMatched = owners.contains(peer.deviceID)
                    case .none, .ambiguous, .pinnedAbsent: ferryMatched = false
                    }
                    if matches.isEmpty, !ferryMatched, !answering.isEmpty {
                        strangers[target] = Self.pinnedAbsentText(target.text, owners: owners, strangers: answering)
                    }
                }
                if !matches.isEmpty, ferryMatched {
                    throw CLIError.failure(
                        "'\(target)' names a ferry peer and a LocalSend device ("
                            + matches.map(Self.listing).joined(separator: ", ")
                            + "); name the ferry peer by the start of its device ID, the LocalSend device by"
                            + " HOST:53317 or the start of its fingerprint")
                }
                if matches.count > 1 {
                    throw CLIError.failure(
                        "'\(target)' matches \(matches.count) LocalSend devices: "
                            + matches.map(Self.listing).joined(separator: ", ")
                            + "; name one by the start of its fingerprint instead")
                }
                // Either kind alone is taken only once the other had its time to answer too.
                let settled = ContinuousClock.now >= min(deadline, localSend.started + localSend.settle)
                if let record = matches.first, settled {
                    chosen.append(Self.peer(record))
                } else if ferryMatched, settled {
                    ferry.append(target)
                } else {
                    waiting.append(target)
                }
            }
            names = waiting
            for target in names {
                if let reason = strangers[target], said.insert(reason).inserted {
                    run.reporter.say("\(reason); waiting for the trusted device (--wait)")
                }
            }
            if let reason = names.lazy.compactMap({ strangers[$0] }).first, ContinuousClock.now >= deadline {
                throw CLIError.failure("\(reason); the trusted device did not appear within \(wait.shortDescription) s")
            }
            if names.isEmpty || ContinuousClock.now >= deadline { break }
            try Task.checkCancellation()
            await run.tracker.waitForChange(
                after: generation, until: min(deadline, ContinuousClock.now + .milliseconds(250)))
        }
        return (ferry + names, chosen)
    }

    /// The device IDs `name` is pinned to: pinned peers of either kind under that name, and pinned LocalSend devices
    /// with that alias (compared as `DisplayNameMatch` does).
    static func pinnedOwners(of name: String, in trusted: [TrustedPeer]) -> [DeviceID] {
        guard !DisplayNameMatch.key(name).isEmpty else { return [] }
        return trusted.filter { peer in
            (!peer.name.isEmpty && DisplayNameMatch.same(peer.name, name))
                || (peer.kind == .localsend && peer.alias.map { DisplayNameMatch.same($0, name) } ?? false)
        }.map(\.deviceID)
    }

    /// Why a pinned name names nobody yet, as `TargetMatch.pinnedNameText` says it for ferry peers.
    static func pinnedAbsentText(_ name: String, owners: Set<DeviceID>, strangers: [LocalSendFormat.Record]) -> String {
        let owner = owners.map(\.shortDescription).sorted().joined(separator: ", ")
        return "'\(TerminalText.excerpt(name))' is pinned to device \(owner), which is not here; "
            + (strangers.count == 1 ? "another device calls itself that: " : "other devices call themselves that: ")
            + strangers.map(Self.listing).joined(separator: ", ") + " (not trusted, so nothing is sent to it)"
    }

    /// Every usable LocalSend device discovery heard (`--all`).
    func allLocalSendPeers(_ localSend: LocalSendSending?) async -> [LocalSendPeer] {
        guard let discovery = localSend?.discovery else { return [] }
        return await discovery.devices.values.filter { $0.isUsable && !Self.isFerry($0) }.sorted { $0.alias < $1.alias }
            .map(Self.peer)
    }

    /// A `ferry receive` serves LocalSend too (model "ferry"): it is sent to through ferry's own protocol (resume,
    /// per-chunk verification), never a second time as a LocalSend device, and its name is not ambiguous with itself.
    static func isFerry(_ record: LocalSendFormat.Record) -> Bool {
        record.deviceModel == "ferry"
    }

    static func listing(_ record: LocalSendFormat.Record) -> String {
        "\(TerminalText.escape(record.alias)) (LocalSend \(LocalSendFormat.shortFingerprint(record)) at "
            + "\(record.address.withPort(record.port)))"
    }

    static func peer(_ record: LocalSendFormat.Record) -> LocalSendPeer {
        let fingerprint = record.certificateHash.map(LocalSendFingerprint.init(deviceID:))
        let nobody = LocalSendFingerprint(deviceID: DeviceID(bytes: [UInt8](repeating: 0, count: 32))!)
        return LocalSendPeer(
            name: record.alias,
            destination: LocalSendDestination(
                host: record.address.hostDescription, port: record.port, fingerprint: fingerprint ?? nobody,
                scheme: record.scheme),
            discovered: true, unusable: record.unusableReason)
    }

    /// HOST:53317: the certificate a device at that address announced, if its record is verified (our register to
    /// it answered over a connection pinned to it: one spoofed datagram is not enough), else the one a handshake
    /// with no request byte shows (to be pinned or confirmed before anything is sent; not "discovered", so without a
    /// terminal it is refused unless pinned). Records of several certificates claiming the address refuse it; a
    /// `ferry receive`'s LocalSend face (model ferry) is not a LocalSend target here either.
    private func addressPeer(
        _ text: String, _ address: SocketAddress, _ localSend: LocalSendSending, until deadline: ContinuousClock.Instant
    ) async -> LocalSendPeer {
        // A receiver answers our announcement within a second or so (the apps by multicast once their register to
        // us failed: a send serves no HTTPS); localsend-cli announces every 5 s. Waited for a little, then learned.
        let until = min(deadline, ContinuousClock.now + .seconds(6))
        while let discovery = localSend.discovery {
            let records = await discovery.devices.values.filter {
                $0.address.hostDescription == address.hostDescription && $0.port == address.port && !Self.isFerry($0)
            }
            let certificates = Set(records.map { $0.certificateHash.map(\.description) ?? $0.key })
            if certificates.count > 1 {
                var peer = LocalSendPeer(
                    name: text,
                    destination: LocalSendDestination(
                        host: address.hostDescription, port: address.port,
                        fingerprint: LocalSendFingerprint(deviceID: DeviceID(bytes: [UInt8](repeating: 0, count: 32))!)),
                    discovered: false)
                peer.unusable =
                    "\(certificates.count) devices with different certificates claim this address ("
                    + records.map(Self.listing).joined(separator: ", ")
                    + "); nothing was sent: name the one you mean by the start of its fingerprint"
                return peer
            }
            if let record = records.first(where: \.verified) {
                return Self.peer(record)
            }
            guard ContinuousClock.now < until, (try? await Task.sleep(for: .milliseconds(200))) != nil else { break }
        }
        let nobody = LocalSendFingerprint(deviceID: DeviceID(bytes: [UInt8](repeating: 0, count: 32))!)
        var peer = LocalSendPeer(
            name: text,
            destination: LocalSendDestination(host: address.hostDescription, port: address.port, fingerprint: nobody),
            discovered: false)
        switch await localSend.sender.presentedCertificate(host: address.hostDescription, port: address.port) {
        case .success(let fingerprint): peer.destination.fingerprint = fingerprint
        case .failure(let error): peer.unusable = error.description
        }
        return peer
    }

    /// The receivers that may be sent to: pinned ones; on a terminal, the ones whose fingerprint the person
    /// confirmed (a sends and pins); without one, discovered ones unless `--trusted-only` (as for ferry peers: nobody
    /// is asked), never a bare address whose certificate nobody pinned or compared.
    func confirmLocalSend(
        _ peers: [LocalSendPeer], localSend: LocalSendSending, run: TransferSession, context: CommandContext
    ) async throws -> (kept: [LocalSendPeer], failures: [TransferSummary.PeerResult]) {
        let asking = Self.confirmsCodes(context, trustedOnly: trustedOnly)
        let store = TrustStore(environment: context.environment)
        var kept: [LocalSendPeer] = []
        var failures: [TransferSummary.PeerResult] = []
        for peer in peers {
            try Task.checkCancellation()
            let fingerprint = peer.destination.fingerprint
            func fail(_ text: String) {
                run.reporter.failure("\(TerminalText.escape(peer.name)) (LocalSend): \(text)")
                failures.append(Self.localSendResult(peer, failure: text))
            }
            if let reason = peer.unusable {
                fail(reason)
                continue
            }
            if (try? store.entry(for: fingerprint.deviceID)) != nil {
                kept.append(peer)
                continue
            }
            let pinCommand = LocalSendVerification.pinCommand(fingerprint.deviceID, name: peer.name)
            if trustedOnly {
                fail(
                    "not trusted here, and --trusted-only sends to trusted receivers only; compare its fingerprint"
                        + " with its LocalSend app's, then pin it with '\(pinCommand)'")
                continue
            }
            if !asking {
                if peer.discovered {
                    kept.append(peer)
                } else {
                    fail(
                        "its certificate \(fingerprint) is not pinned here and nobody is at a terminal to compare it;"
                            + " compare it with the fingerprint its LocalSend app shows, then pin it with"
                            + " '\(pinCommand)'")
                }
                continue
            }
            // Its alias and address only: the model and type a datagram claims are not shown as if checked.
            let contact = LocalSendContact(
                alias: peer.discovered ? peer.name : "", fingerprint: fingerprint.deviceID,
                ownFingerprint: localSend.identity.fingerprint.deviceID,
                address: "\(peer.destination.host):\(peer.destination.port)")
            let lines =
                contact.lines(sending: true) + ["Does it? [y]es, [n]o, [a]lways (yes, and trust it from now on)"]
            run.reporter.say(lines: lines)
            switch await Self.readAnswer() {
            case .accept:
                kept.append(peer)
            case .always:
                kept.append(peer)
                do {
                    try LocalSendVerification.pin(
                        fingerprint.deviceID, alias: peer.discovered ? peer.name : "", in: store
                    ) {
                        run.reporter.say($0)
                    }
                    run.reporter.say("\(TerminalText.escape(peer.name)) is trusted from now on (ferry trust list)")
                } catch {
                    run.reporter.say(
                        "could not trust \(TerminalText.escape(peer.name)): " + TerminalText.escape("\(error)"))
                }
            case .deny:
                fail("you did not confirm its fingerprint: nothing was sent to it")
            }
        }
        return (kept, failures)
    }

    /// One line from the terminal (60 s), as y / a / anything else.
    private static func readAnswer() async -> OfferPrompt.Answer {
        await withTaskGroup(of: OfferPrompt.Answer?.self) { group in
            group.addTask {
                for await line in StandardInputLines.stream() { return OfferPrompt.answer(line) }
                return .deny
            }
            group.addTask {
                guard (try? await Task.sleep(for: .seconds(60))) != nil else { return nil }
                return .deny
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .deny
        }
    }

    /// What LocalSend receivers are offered: each file under its name (folders joined by `/`), then the text.
    /// Each file is hashed here (SHA-256, streaming, off the cooperative pool; Ctrl-C stops it within a MiB).
    static func localSendItems(_ files: [SourceFile], text: String?) async throws -> [LocalSendOutgoing] {
        var items: [LocalSendOutgoing] = []
        for file in files {
            do {
                items.append(try await LocalSendOutgoing.hashing(path: file.path, name: file.name))
            } catch .cancelled {
                throw CancellationError()
            } catch {
                throw CLIError.failure(error.description)
            }
        }
        if let text { items.append(.text(text)) }
        return items
    }

    /// Sends `items` to each receiver at once, each by its own upload; one result per receiver.
    func sendLocalSend(
        _ items: [LocalSendOutgoing], to peers: [LocalSendPeer], localSend: LocalSendSending, run: TransferSession,
        context: CommandContext, pin: String?
    ) async -> [TransferSummary.PeerResult] {
        let terminal = context.isStdinTerminal && context.isStderrTerminal
        let prompts = LocalSendPinPrompts(say: { run.reporter.say($0) })
        let total = items.reduce(Int64(0)) { $0 + $1.size }
        return await withTaskGroup(of: (Int, TransferSummary.PeerResult).self) { group in
            for (index, peer) in peers.enumerated() {
                group.addTask {
                    let name = TerminalText.escape(peer.name)
                    run.reporter.say(
                        "\(name) (LocalSend): offering \(items.count) \(items.count == 1 ? "file" : "files")"
                            + " (\(TransferFormat.bytes(UInt64(total))))")
                    // A bar on the board, as for ferry peers: the bytes of the files before plus this file's.
                    let key = ProgressBoard.Key(
                        transferID: .random(), peerID: PeerID(rawValue: UInt64.random(in: 1...UInt64.max)))
                    let starts = items.reduce(into: [Int64(0)]) { $0.append($0.last! + $1.size) }
                    let started = ContinuousClock.now
                    let board = run.reporter.board
                    let progress: @Sendable (Int, Int64) -> Void = { index, bytes in
                        guard let board else { return }
                        let done = UInt64(max(0, starts[index] + bytes))
                        let seconds = Double((ContinuousClock.now - started).components.seconds) + 0.001
                        let rate = Double(done) / seconds
                        board.update(
                            key,
                            ProgressLine(
                                name: peer.name, bytesDone: done, totalBytes: UInt64(total), rate: rate,
                                secondsLeft: rate > 0 ? Double(UInt64(total) - min(done, UInt64(total))) / rate : nil))
                    }
                    progress(0, 0)
                    defer { board?.remove(key) }
                    let result = await localSend.sender.send(
                        items, to: peer.destination, pin: pin,
                        askPin: { wrong in
                            if pin != nil { return nil }  // the sender gives the file's PIN itself, once
                            guard terminal else { return nil }
                            return await prompts.ask(
                                "\(name) (LocalSend) " + (wrong ? "refused the PIN; PIN again:" : "asks for a PIN:"))
                        }, progress: progress)
                    return (index, Self.localSendResult(peer, result: result, items: items, pinGiven: pin != nil))
                }
            }
            var results: [(Int, TransferSummary.PeerResult)] = []
            for await result in group {
                results.append(result)
                let peerResult = result.1
                if let failure = peerResult.failure {
                    run.reporter.failure("\(TerminalText.escape(peerResult.name)) (LocalSend): \(failure)")
                } else {
                    run.reporter.say(
                        "\(TerminalText.escape(peerResult.name)) (LocalSend): "
                            + "done, \(peerResult.filesSucceeded) of \(items.count) stored or shown")
                }
            }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }

    static func localSendResult(_ peer: LocalSendPeer, failure: String) -> TransferSummary.PeerResult {
        var result = TransferSummary.PeerResult(
            name: peer.name, peerID: peer.destination.fingerprint.description, failure: failure)
        result.protocolName = "localsend"
        return result
    }

    static func localSendResult(
        _ peer: LocalSendPeer, result: LocalSendSendResult, items: [LocalSendOutgoing], pinGiven: Bool
    ) -> TransferSummary.PeerResult {
        var succeeded = 0
        var failed = 0
        var declined = 0
        var accepted: UInt64 = 0
        var firstFailure: String?
        for (item, outcome) in zip(items, result.outcomes) {
            switch outcome {
            case .sent, .shown:
                succeeded += 1
                accepted += UInt64(item.size)
            case .skipped:
                declined += 1
                failed += 1
            case .failed(let reason):
                failed += 1
                if firstFailure == nil { firstFailure = "\(item.name): \(reason)" }
            case .notSent: failed += 1
            }
        }
        var failure = result.failure ?? firstFailure
        if case .pinRefused = result.stop, pinGiven {
            failure = "the receiver refused the PIN in --pin-file; nothing was sent"
        } else if case .pinRequired = result.stop {
            failure =
                "the receiver asks for a PIN: give it with --pin-file FILE (its first line), or send from a terminal"
                + " to be asked; nothing was sent"
        }
        if failure == nil, declined > 0 {
            failure =
                "the receiver declined \(declined) of \(items.count) \(items.count == 1 ? "file" : "files") (the person"
                + " there, or its settings); \(declined == 1 ? "it was" : "they were") not sent"
        }
        if failure == nil, failed > 0 { failure = "\(failed) of \(items.count) files did not arrive" }
        var peerResult = TransferSummary.PeerResult(
            name: peer.name, peerID: peer.destination.fingerprint.description, filesSucceeded: succeeded,
            filesFailed: failed, bytes: UInt64(result.bytesSent),
            wireBytes: UInt64(result.bytesSent), failure: failure)
        peerResult.acceptedBytes = accepted
        peerResult.protocolName = "localsend"
        return peerResult
    }
}
