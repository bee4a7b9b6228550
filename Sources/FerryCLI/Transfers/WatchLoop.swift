import FerrySession
import FerrySystem
import FerryTransfer
import FerryWire
import Synchronization

/// The running part of `ferry watch`: turns files appearing in a directory into transfers, one queue per peer.
///
/// One loop reads the directory watcher (and, with `--all`, notices new peers) and appends each admitted file to
/// the queue of every target; one worker per target connects to its peer (again and again, while it is away)
/// and sends its queue in order, one file per transfer, so that a result always names exactly one file and a
/// file whose transfer was cut off is simply sent again (the receiver resumes it). A slow or absent peer holds
/// back only its own queue.
struct WatchLoop: Sendable {
    let run: TransferSession
    let directory: DirectoryHandle
    let watcher: DirectoryWatcher
    let targets: [PeerTarget]
    let all: Bool
    /// Send only to pinned receivers (`--trusted-only`): any other is disconnected before anything is offered.
    let trustedOnly: Bool
    let json: Bool
    /// How long a worker waits before asking an absent or refusing peer again (sooner when peers change).
    var retryInterval: Duration = .seconds(5)
    var connectTimeout: Duration = .seconds(10)

    private enum Input: Sendable {
        case watch([WatchEvent])
        case watchFailed(String)
        case directoryGone(String)
        case peersChanged
    }

    /// The queues by target key; a target dropped for good (it does not receive files) keeps its key with nil.
    private final class Queues: Sendable {
        let state = Mutex<[String: AsyncStream<SourceFile>.Continuation?]>([:])
    }

    /// Runs until cancelled (throws `CancellationError`) or until the directory is gone: removed, moved away or
    /// unmounted (throws `CLIError`, so `ferry watch` says so and exits 1).
    func run(known initial: WatchedFiles) async throws {
        var known = initial
        let queues = Queues()
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
        let watcher = self.watcher
        let tracker = run.tracker
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    while true {
                        input.yield(.watch(try await watcher.next()))
                    }
                } catch {
                    if !Task.isCancelled {
                        input.yield(.watchFailed("\(error)"))
                    }
                }
            }
            // inotify says nothing of a removal while the directory is held open (we hold it): check its path too.
            if let presence = DirectoryPresence(path: watcher.path) {
                group.addTask {
                    if let reason = await presence.waitForLoss() {
                        input.yield(.directoryGone(reason))
                    }
                }
            }
            if all {
                group.addTask {
                    while !Task.isCancelled, await !tracker.isFinished {
                        let generation = await tracker.generation
                        input.yield(.peersChanged)
                        await tracker.waitForChange(after: generation, until: nil)
                    }
                }
            }
            for target in targets {
                addWorker(for: target, key: target.description, label: target.description, in: &group, queues)
            }
            for await next in inputs {
                switch next {
                case .watch(let events):
                    for event in events {
                        switch event {
                        case .fileReady(let name):
                            enqueue(name, &known, queues)
                        case .overflow:
                            // Events were lost: whatever is new in the directory now is what they were about.
                            for name in (try? directory.entries())?.sorted() ?? [] {
                                enqueue(name, &known, queues)
                            }
                        case .gone:
                            throw CLIError.failure(
                                "\(watcher.path) was removed, moved away or unmounted; stopped watching it")
                        }
                    }
                case .directoryGone(let reason):
                    throw CLIError.failure("\(reason); stopped watching it")
                case .watchFailed(let message):
                    throw CLIError.failure("stopped watching \(watcher.path): \(message)")
                case .peersChanged:
                    for peer in await tracker.reachable where peer.mode != .client {
                        let key = peer.deviceID.description
                        guard queues.state.withLock({ $0[key] == nil }) else { continue }
                        addWorker(
                            for: .name(peer.deviceID.description), key: key,
                            label: TerminalText.escape(peer.displayName), in: &group, queues)
                    }
                }
            }
            throw CancellationError()
        }
    }

    private func addWorker(
        for target: PeerTarget, key: String, label: String, in group: inout ThrowingTaskGroup<Void, any Error>,
        _ queues: Queues
    ) {
        let (files, queue) = AsyncStream.makeStream(of: SourceFile.self)
        queues.state.withLock { $0[key] = queue }
        group.addTask {
            let keepGoing = await work(target, label: label, files: files)
            if !keepGoing {
                queues.state.withLock { $0[key] = .some(nil) }
                queue.finish()
            }
        }
    }

    /// Admits `name` if it is a new version of a regular file, and appends it to every queue.
    private func enqueue(_ name: String, _ known: inout WatchedFiles, _ queues: Queues) {
        guard !WatchFilter.isSkipped(name), let status = try? directory.status(of: name) else {
            return
        }
        let version = WatchedFiles.Version(name: name, size: status.size, modified: status.modificationTime)
        guard known.admit(version, kind: status.kind) else {
            return
        }
        if json {
            run.reporter.emit(
                JSONLine(
                    event: JSONEvents.Transfers.queued,
                    ["name": .string(name), "size": TransferReporter.int(status.size)]))
        }
        let file = SourceFile(path: directory.path + "/" + name, name: name)
        queues.state.withLock { queues in
            for queue in queues.values {
                queue?.yield(file)
            }
        }
    }

    /// Sends the files of one target as they come; false when the target turned out not to receive files.
    private func work(_ target: PeerTarget, label: String, files: AsyncStream<SourceFile>) async -> Bool {
        var away = false
        for await file in files {
            attempts: while !Task.isCancelled {
                let peer: PeerInfo
                do {
                    peer = try await connectedPeer(target, label: label, away: &away)
                } catch let error as TransferError {
                    run.reporter.failure("\(label): \(error.description) Its files are not sent.")
                    return false
                } catch {
                    return true
                }
                if trustedOnly, !peer.isTrusted {
                    await run.session.disconnect(peer.peerID)
                    run.reporter.failure(
                        "\(label): not trusted here, and --trusted-only sends to trusted receivers only; pin it with"
                            + " 'ferry trust add \(peer.deviceID.shortDescription)' while it runs 'ferry receive'."
                            + " Its files are not sent.", peer: peer)
                    return false
                }
                do {
                    // A newer version of a file sent before takes the place of the one this side delivered there
                    // (PROTOCOL.md 11.10 rule 11): the receiver replaces it only if it still is that file.
                    var prepared = try await run.engine.prepare([.file(file)])
                    prepared.flags = .replaces
                    let outcomes = try await run.engine.send(prepared, to: [peer.peerID])
                    let stillConnected = await run.session.peer(peer.peerID)?.state == .connected
                    if outcomes.first?.isSuccess == true || stillConnected {
                        // Sent, or refused by a peer that is still there (reported): either way, done with it.
                        break attempts
                    }
                } catch TransferError.notConnected {
                    continue attempts
                } catch let error as TransferError {
                    run.reporter.failure("\(file.name) was not sent to \(label): \(error.description)")
                    break attempts
                } catch {
                    return true
                }
            }
        }
        return true
    }

    /// The target's peer, connected: waits while it is away (saying so once per absence) and retries.
    /// - Throws: `TransferError.peerCannotReceive`, `CancellationError`.
    private func connectedPeer(_ target: PeerTarget, label: String, away: inout Bool) async throws -> PeerInfo {
        var reported: String?
        var warned: String?
        while true {
            try Task.checkCancellation()
            let generation = await run.tracker.generation
            let reachable = await run.tracker.reachable
            var failure = "not found in the session"
            do {
                let match = target.match(in: reachable.map(PeerCandidate.init), pinned: await run.session.trustedPeers)
                if case .pinned = match, let warning = match.pinnedNameText(target.text), warned != warning {
                    warned = warning
                    run.reporter.say(warning)
                }
                switch (target, match) {
                case (_, .one(let candidate)), (_, .pinned(let candidate, _)):
                    if let current = await run.session.peer(candidate.peerID), current.state == .connected {
                        return back(current, label: label, away: &away, connected: false)
                    }
                    if let peer = reachable.first(where: { $0.peerID == candidate.peerID }) {
                        return back(try await run.connect(peer, timeout: connectTimeout), label: label, away: &away)
                    }
                case (.address(_, let address), .none):
                    return back(
                        try await run.connect(toAddress: address, timeout: connectTimeout), label: label, away: &away)
                case (_, .ambiguous(let matches)):
                    failure = "it matches \(matches.count) peers: " + matches.map(\.listing).joined(separator: ", ")
                case (_, .pinnedAbsent):
                    failure = match.pinnedNameText(target.text) ?? failure
                case (.name, .none):
                    break
                }
            } catch let error as TransferError {
                if case .peerCannotReceive = error { throw error }
                failure = error.description
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                failure = CommandRunner.describe(error)
            }
            if !away || reported != failure {
                away = true
                reported = failure
                run.reporter.say("\(label) is not reachable (\(TerminalText.escape(failure))); its files wait")
            }
            await run.tracker.waitForChange(after: generation, until: .now + retryInterval)
        }
    }

    /// `peer` after a wait or a new connection: says so.
    private func back(_ peer: PeerInfo, label: String, away: inout Bool, connected: Bool = true) -> PeerInfo {
        if away {
            away = false
            run.reporter.say("\(label) is back; sending its files")
        }
        if connected {
            run.reporter.connected(peer)
        }
        return peer
    }
}
