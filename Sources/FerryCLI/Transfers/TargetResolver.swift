import FerrySession
import FerryTransfer
import FerryWire

/// Finds and connects the peers a sending command was told about: `--to` targets, or every receiver (`--all`).
///
/// Names are matched against the peers the tracker has seen, waiting for discovery up to a deadline; an unknown
/// or ambiguous name stops the command before anything is sent, with a message that lists what was seen. Then
/// every target is connected at once, so one slow peer does not hold back the others.
struct TargetResolver: Sendable {
    let run: TransferSession
    /// For messages: the session ID as the user gave it.
    let sessionID: String
    /// The connect timeout for each peer.
    var connectTimeout: Duration = .seconds(10)

    /// Waits until every `.name` target matches exactly one reachable peer, or `deadline` passes.
    /// - Throws: `CLIError.failure` naming the unknown or ambiguous targets; `CancellationError`.
    func resolve(_ targets: [PeerTarget], until deadline: ContinuousClock.Instant, waited: Double) async throws
        -> [PeerTarget: PeerInfo]
    {
        var resolved: [PeerTarget: PeerInfo] = [:]
        // Why a name pinned here names nobody yet: another device answers to it (said if the wait runs out).
        var impostors: [PeerTarget: String] = [:]
        while true {
            let generation = await run.tracker.generation
            let reachable = await run.tracker.reachable
            let pinned = await run.session.trustedPeers
            let candidates = reachable.map(PeerCandidate.init)
            var missing: [PeerTarget] = []
            for target in targets where resolved[target] == nil {
                guard case .name = target else { continue }
                let match = target.match(in: candidates, pinned: pinned)
                switch match {
                case .one(let candidate):
                    resolved[target] = reachable.first { $0.peerID == candidate.peerID }
                case .pinned(let candidate, _):
                    resolved[target] = reachable.first { $0.peerID == candidate.peerID }
                    if let warning = match.pinnedNameText(target.text) { run.reporter.say(warning) }
                case .pinnedAbsent:
                    let reason = match.pinnedNameText(target.text)
                    if let reason, impostors[target] != reason {
                        run.reporter.say("\(reason); waiting for the trusted device (--wait)")
                    }
                    impostors[target] = reason
                    missing.append(target)
                case .ambiguous(let matches):
                    throw CLIError.failure(
                        "'\(target)' matches \(matches.count) peers: "
                            + matches.map(\.listing).joined(separator: ", ")
                            + "; name one by the start of its device ID instead")
                case .none:
                    missing.append(target)
                }
            }
            if missing.isEmpty {
                return resolved
            }
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline, await !run.tracker.isFinished else {
                let seen = await run.tracker.namesSeen.map(TerminalText.escape)
                if let reason = missing.lazy.compactMap({ impostors[$0] }).first {
                    throw CLIError.failure(
                        "\(reason); the trusted device did not appear in session \(TerminalText.escape(sessionID)) "
                            + "within \(waited.shortDescription) s")
                }
                let names = missing.map { "\($0)" }.joined(separator: " or ")
                let seenText = seen.isEmpty ? "none" : seen.joined(separator: ", ")
                throw CLIError.failure(
                    "no peer named \(names) was found in session \(TerminalText.escape(sessionID)) within "
                        + "\(waited.shortDescription) s; peers seen: \(seenText)")
            }
            await run.tracker.waitForChange(after: generation, until: deadline)
        }
    }

    /// Connects to each target at once (names through `resolved`); returns the connected peers, without
    /// duplicates, in target order, and a failed result for each target that could not be connected (also
    /// reported as it happens). A busy target is asked again until `deadline` (see `whileBusy`).
    func connect(
        _ targets: [PeerTarget], resolved: [PeerTarget: PeerInfo], until deadline: ContinuousClock.Instant? = nil
    ) async
        -> (peers: [PeerInfo], failures: [TransferSummary.PeerResult])
    {
        let results = await withTaskGroup(of: (Int, Result<PeerInfo, any Error>).self) { group in
            for (index, target) in targets.enumerated() {
                group.addTask {
                    do {
                        let name = resolved[target]?.displayName ?? "\(target)"
                        let peer = try await whileBusy(name, until: deadline) {
                            switch target {
                            case .address(_, let address):
                                return try await run.connect(toAddress: address, timeout: connectTimeout)
                            case .name:
                                guard let peer = resolved[target] else {
                                    throw TransferError.notConnected("\(target)")
                                }
                                return try await run.connect(peer, timeout: connectTimeout)
                            }
                        }
                        return (index, .success(peer))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results: [(Int, Result<PeerInfo, any Error>)] = []
            for await result in group {
                results.append(result)
            }
            return results.sorted { $0.0 < $1.0 }
        }
        var peers: [PeerInfo] = []
        var failures: [(result: TransferSummary.PeerResult, line: String?, peer: PeerInfo?)] = []
        for (index, result) in results {
            switch result {
            case .success(let peer):
                if !peers.contains(where: { $0.peerID == peer.peerID }) {
                    peers.append(peer)
                    run.reporter.connected(peer)
                }
            case .failure(let error):
                guard !(error is CancellationError) else { continue }
                let target = targets[index]
                let name = resolved[target]?.displayName ?? "\(target)"
                let (message, line) = Self.connectFailure(error, name: name)
                failures.append(
                    (
                        TransferSummary.PeerResult(
                            name: name, peerID: resolved[target]?.peerID.description, failure: message), line,
                        resolved[target]
                    ))
            }
        }
        reportFailures(failures, anyConnected: !peers.isEmpty)
        return (peers, failures.map(\.result))
    }

    /// Reports the connections that failed, unless nothing else is about to happen: when no peer was connected, the
    /// summary that follows at once says the same (`nothing sent to dave: ...`), and saying it twice reads as two
    /// failures. With `--json` every failure is an `error` event, as scripts expect.
    func reportFailures(
        _ failures: [(result: TransferSummary.PeerResult, line: String?, peer: PeerInfo?)], anyConnected: Bool
    ) {
        guard run.reporter.json || anyConnected else { return }
        for failure in failures {
            if let line = failure.line { run.reporter.failure(line, peer: failure.peer) }
        }
    }
}

extension TargetResolver {
    /// The first wait after a busy answer; each later one doubles, up to `busyRetryMaximum`, with jitter (±50 %)
    /// so that senders refused together do not come back together.
    static let busyRetryFirst = Duration.milliseconds(100)
    static let busyRetryMaximum = Duration.seconds(2)

    /// Runs `attempt` (a connect) again while the peer answers that it is busy (full, or too many connections
    /// from here waiting: `SessionError.busyReason`), until `deadline`; says once per reason what it waits for.
    ///
    /// Why: a receiver caps its peers (16) and the connections waiting from one address (8); many senders started
    /// at once hit those caps, and each of them would otherwise fail although a moment later there is room. The
    /// wait is the sender's `--wait`, the time it already gives a peer to appear. Without a deadline, or past it,
    /// the busy answer is the error.
    func whileBusy(
        _ name: String, until deadline: ContinuousClock.Instant?, _ attempt: () async throws -> PeerInfo
    ) async throws -> PeerInfo {
        var delay = Self.busyRetryFirst
        var said: String?
        while true {
            do {
                return try await attempt()
            } catch let error as SessionError {
                guard let reason = error.busyReason, let deadline else { throw error }
                let pause = delay * Double.random(in: 0.5...1.5)
                guard ContinuousClock.now + pause < deadline else {
                    throw SessionError.busy(
                        peer: name, detail: "\(reason); still busy when --wait ran out, try again later")
                }
                if said != reason {
                    said = reason
                    run.reporter.say("\(TerminalText.escape(name)) is busy: \(TerminalText.escape(reason)); waiting")
                }
                try await Task.sleep(for: pause)
                delay = min(delay * 2, Self.busyRetryMaximum)
            }
        }
    }

    /// `--all`: connects to every peer in server or peer mode that appears, until `quiet` passes with no new
    /// one after the first (or `deadline` passes). Peers that do not receive files are left out quietly.
    func collectAll(until deadline: ContinuousClock.Instant, quiet: Duration) async
        -> (peers: [PeerInfo], failures: [TransferSummary.PeerResult])
    {
        let results = await withTaskGroup(of: (PeerInfo, Result<PeerInfo, any Error>).self) { group in
            var attempted = Set<PeerID>()
            var lastNew: ContinuousClock.Instant?
            while !Task.isCancelled {
                let generation = await run.tracker.generation
                for peer in await run.tracker.reachable
                where peer.mode != .client && !attempted.contains(peer.peerID) {
                    attempted.insert(peer.peerID)
                    lastNew = .now
                    group.addTask {
                        do {
                            let connected = try await whileBusy(peer.displayName, until: deadline) {
                                try await run.connect(peer, timeout: connectTimeout)
                            }
                            return (peer, .success(connected))
                        } catch {
                            return (peer, .failure(error))
                        }
                    }
                }
                let until = lastNew.map { min(deadline, $0 + quiet) } ?? deadline
                guard ContinuousClock.now < until, await !run.tracker.isFinished else { break }
                await run.tracker.waitForChange(after: generation, until: until)
            }
            var results: [(PeerInfo, Result<PeerInfo, any Error>)] = []
            for await result in group {
                results.append(result)
            }
            return results.sorted { $0.0.displayName < $1.0.displayName }
        }
        var peers: [PeerInfo] = []
        var failures: [(result: TransferSummary.PeerResult, line: String?, peer: PeerInfo?)] = []
        for (peer, result) in results {
            switch result {
            case .success(let connected):
                peers.append(connected)
                run.reporter.connected(connected)
            case .failure(let error):
                if error is CancellationError || error as? TransferError == .peerCannotReceive(peer.displayName) {
                    continue
                }
                let (message, line) = Self.connectFailure(error, name: peer.displayName)
                failures.append(
                    (
                        TransferSummary.PeerResult(
                            name: peer.displayName, peerID: peer.peerID.description, failure: message), line, peer
                    ))
            }
        }
        reportFailures(failures, anyConnected: !peers.isEmpty)
        return (peers, failures.map(\.result))
    }
}

extension TargetResolver {
    /// What the summary says of a failed connection, and the line that reports it before the transfer (nil when
    /// there is none to print). A pinned key that changed was reported already (the session's error event, with
    /// what to do): it is not repeated.
    static func connectFailure(_ error: any Error, name: String) -> (summary: String, line: String?) {
        if case .pinnedKeyChanged? = error as? SessionError {
            return ("refused: it presents another key than the one you trusted (see the error above)", nil)
        }
        let message = CommandRunner.describe(error)
        // `connectFailed` names the peer already ("could not reach bob: ...").
        if case .connectFailed? = error as? SessionError {
            return (message, message)
        }
        return (message, "could not connect to \(name): \(message)")
    }
}

extension PeerCandidate {
    init(_ peer: PeerInfo) {
        self.init(peerID: peer.peerID, deviceID: peer.deviceID, displayName: peer.displayName, address: peer.address)
    }
}
