/// The receiving side of LocalSend (protocol v2, section 4): one session at a time, from `prepare-upload` through
/// consent to each file's `upload`, `cancel` and the end, with PIN bounds and timeouts.
///
///     idle ──prepareUploadReceived──▶ awaitingConsent ──consentGiven──▶ receiving ──(every file ended)──▶ idle
///                                       │ consentRefused / cancelReceived /        │ cancelReceived /
///                                       │ consentTimeout (timerFired)               │ idleTimeout (timerFired)
///                                       ▼                                           ▼
///                                      idle                                        idle
///
/// Rules, each with its test in LocalSendReceiverTests: a second `prepare-upload` while a session exists is 409, from
/// its own sender too (the apps do the same; a sender that lost its session waits for the timeout or cancels); a PIN
/// is checked before anything else is told (`LocalSendPinGuard`: 401, then 429); no byte is taken before consent; an
/// upload is taken only for an accepted file, with that file's token, from the peer that prepared the session, once;
/// a cancel counts only from that peer (with the session ID once it knows it); the session ends when every accepted
/// file was received or failed.
///
/// Pure: the driver parses HTTP and JSON, passes the peer as TLS saw it (`LocalSendPeer`), the instant, and a random
/// generator for session IDs and tokens; it performs the returned actions (answer, ask, start writing, stop).
public struct LocalSendReceiver: Sendable {
    /// Bounds and timeouts of the session.
    public struct Limits: Equatable, Sendable {
        /// Files one `prepare-upload` may offer. 10,000: more than a phone's largest albums are sent at once, far below
        /// what would make the session's tables a memory risk (the 100k-file request is refused).
        public var maxFiles: Int
        /// How long a `prepare-upload` waits for consent before it is answered 403 (the request is held open).
        public var consentTimeout: Duration
        /// How long an accepted session may see no upload activity (start, progress, end) before it is dropped.
        public var idleTimeout: Duration

        public init(
            maxFiles: Int = 10_000, consentTimeout: Duration = .seconds(120), idleTimeout: Duration = .seconds(60)
        ) {
            self.maxFiles = maxFiles
            self.consentTimeout = consentTimeout
            self.idleTimeout = idleTimeout
        }
    }

    /// What to do with a `prepare-upload`.
    public enum PrepareAction: Equatable, Sendable {
        /// Answer with `status` and end the request.
        case respond(LocalSendStatus, reason: String)
        /// Hold the request and ask for consent (the accept policy) on these files; then report `consentGiven` or
        /// `consentRefused` for `session`.
        case askConsent(session: LocalSendSecret, files: [LocalSendFileOffer])
    }

    /// What to do once consent was decided.
    public enum ConsentAction: Equatable, Sendable {
        /// Answer the held `prepare-upload` 200 with the session ID and a token per accepted file.
        case accept(session: LocalSendSecret, tokens: [String: LocalSendSecret])
        /// Answer the held request with `status` (204: nothing accepted; 403: declined); the session is over.
        case respond(LocalSendStatus, reason: String)
        /// The session is gone already (cancelled or timed out): nothing to answer.
        case ignore
    }

    /// What to do with an `upload` request.
    public enum UploadAction: Equatable, Sendable {
        /// Refuse it with `status`; not one body byte is written.
        case refuse(LocalSendStatus, reason: String)
        /// Take the body of file `fileID` (announced `size` bytes), then report `uploadEnded`.
        case receive(fileID: String, size: UInt64)
    }

    /// What to do with a `cancel` request.
    public enum CancelAction: Equatable, Sendable {
        /// Refuse it with `status`; the session goes on.
        case refuse(LocalSendStatus, reason: String)
        /// Answer 200; stop the session: answer a held `prepare-upload` 403, abort uploads in progress, keep nothing
        /// that was not published.
        case cancel(session: LocalSendSecret)
    }

    /// A session that ended, for the driver's summary.
    public struct Ended: Equatable, Sendable {
        public var session: LocalSendSecret
        public var outcomes: [String: LocalSendFileOutcome]

        public init(session: LocalSendSecret, outcomes: [String: LocalSendFileOutcome]) {
            self.session = session
            self.outcomes = outcomes
        }
    }

    /// What a timer found.
    public enum TimerAction: Equatable, Sendable {
        /// Consent took too long: answer the held `prepare-upload` 403.
        case consentExpired(session: LocalSendSecret)
        /// The sender went quiet: abort uploads in progress, keep nothing unpublished.
        case sessionAbandoned(session: LocalSendSecret)
    }

    private enum FileSlot: Equatable {
        case declined
        case waiting(token: LocalSendSecret)
        case uploading
        case ended(LocalSendFileOutcome)
    }

    private struct Pending {
        var session: LocalSendSecret
        var peer: LocalSendPeer
        var files: [LocalSendFileOffer]
        var since: ContinuousClock.Instant
    }

    private struct Active {
        var session: LocalSendSecret
        var peer: LocalSendPeer
        var sizes: [String: UInt64]
        var slots: [String: FileSlot]
        var open: Int
        var lastActivity: ContinuousClock.Instant
    }

    private enum State {
        case idle
        case awaitingConsent(Pending)
        case receiving(Active)
    }

    public let limits: Limits
    private var state: State = .idle
    private var pins: LocalSendPinGuard

    /// A receiver that requires `pin` (nil: none) within `limits`.
    public init(pin: String?, limits: Limits = Limits()) {
        self.limits = limits
        pins = LocalSendPinGuard(expected: pin)
    }

    /// Whether a session exists (waiting for consent or receiving).
    public var isBusy: Bool {
        if case .idle = state { return false }
        return true
    }

    /// When `timerFired` must be called next; nil when no session waits on time.
    public var nextDeadline: ContinuousClock.Instant? {
        switch state {
        case .idle: return nil
        case .awaitingConsent(let pending): return pending.since.advanced(by: limits.consentTimeout)
        case .receiving(let active): return active.lastActivity.advanced(by: limits.idleTimeout)
        }
    }

    // MARK: events

    /// A `prepare-upload` arrived from `peer` offering `files`, with the `pin` query parameter (nil when absent).
    public mutating func prepareUploadReceived(
        from peer: LocalSendPeer, files: [LocalSendFileOffer], pin: String?, now: ContinuousClock.Instant,
        using generator: inout some RandomNumberGenerator
    ) -> PrepareAction {
        switch pins.check(pin, from: peer.address, now: now) {
        case .accepted: break
        case .rejected: return .respond(.unauthorized, reason: pin == nil ? "PIN required" : "wrong PIN")
        case .lockedOut: return .respond(.tooManyRequests, reason: "too many wrong PINs")
        }
        guard case .idle = state else {
            return .respond(.conflict, reason: "blocked by another session")
        }
        guard !files.isEmpty else { return .respond(.badRequest, reason: "no files") }
        guard files.count <= limits.maxFiles else {
            return .respond(.badRequest, reason: "\(files.count) files, at most \(limits.maxFiles) per session")
        }
        var seen = Set<String>()
        for file in files where !seen.insert(file.id).inserted {
            return .respond(.badRequest, reason: "file ID \(file.id) twice")
        }
        let session = LocalSendSecret.random(using: &generator)
        state = .awaitingConsent(Pending(session: session, peer: peer, files: files, since: now))
        return .askConsent(session: session, files: files)
    }

    /// Consent was given to the files `accepted` (IDs not offered are ignored) of `session`.
    public mutating func consentGiven(
        session: LocalSendSecret, accepted: Set<String>, now: ContinuousClock.Instant,
        using generator: inout some RandomNumberGenerator
    ) -> ConsentAction {
        guard case .awaitingConsent(let pending) = state, pending.session == session else { return .ignore }
        var slots: [String: FileSlot] = [:]
        var sizes: [String: UInt64] = [:]
        var tokens: [String: LocalSendSecret] = [:]
        for file in pending.files {
            sizes[file.id] = file.size
            if accepted.contains(file.id) {
                let token = LocalSendSecret.random(using: &generator)
                tokens[file.id] = token
                slots[file.id] = .waiting(token: token)
            } else {
                slots[file.id] = .declined
            }
        }
        guard !tokens.isEmpty else {
            state = .idle
            return .respond(.noContent, reason: "no file accepted")
        }
        state = .receiving(
            Active(
                session: session, peer: pending.peer, sizes: sizes, slots: slots, open: tokens.count,
                lastActivity: now))
        return .accept(session: session, tokens: tokens)
    }

    /// Consent was refused for `session`.
    public mutating func consentRefused(session: LocalSendSecret) -> ConsentAction {
        guard case .awaitingConsent(let pending) = state, pending.session == session else { return .ignore }
        state = .idle
        return .respond(.forbidden, reason: "declined")
    }

    /// An `upload` arrived from `peer` with its query parameters (nil when absent or not hex).
    public mutating func uploadReceived(
        from peer: LocalSendPeer, session: LocalSendSecret?, fileID: String?, token: LocalSendSecret?,
        now: ContinuousClock.Instant
    ) -> UploadAction {
        guard let session, let fileID, let token else {
            return .refuse(.badRequest, reason: "sessionId, fileId and token are required")
        }
        guard case .receiving(var active) = state else {
            if case .awaitingConsent = state { return .refuse(.conflict, reason: "no consent yet") }
            return .refuse(.conflict, reason: "no session")
        }
        guard active.peer.isSame(as: peer) else {
            return .refuse(.forbidden, reason: "not the peer of this session (\(peer))")
        }
        guard active.session.matches(session) else { return .refuse(.forbidden, reason: "wrong session ID") }
        switch active.slots[fileID] {
        case .waiting(let expected)?:
            guard expected.matches(token) else { return .refuse(.forbidden, reason: "wrong token") }
            active.slots[fileID] = .uploading
            active.lastActivity = now
            let size = active.sizes[fileID] ?? 0
            state = .receiving(active)
            return .receive(fileID: fileID, size: size)
        case .uploading?, .ended(.received)?, .ended(.failed)?:
            return .refuse(.conflict, reason: "file \(fileID) was uploaded already")
        case .declined?, .ended(.declined)?, nil:
            return .refuse(.forbidden, reason: "file \(fileID) is not accepted in this session")
        }
    }

    /// Bytes of an upload arrived: the session is alive.
    public mutating func uploadProgressed(now: ContinuousClock.Instant) {
        guard case .receiving(var active) = state else { return }
        active.lastActivity = now
        state = .receiving(active)
    }

    /// The upload of `fileID` ended: `received` (published, verified) or `failed`. Returns the session's end once
    /// every accepted file ended.
    public mutating func uploadEnded(fileID: String, outcome: LocalSendFileOutcome, now: ContinuousClock.Instant)
        -> Ended?
    {
        guard case .receiving(var active) = state, active.slots[fileID] == .uploading else { return nil }
        active.slots[fileID] = .ended(outcome == .declined ? .failed : outcome)
        active.open -= 1
        active.lastActivity = now
        guard active.open == 0 else {
            state = .receiving(active)
            return nil
        }
        state = .idle
        return Ended(session: active.session, outcomes: Self.outcomes(of: active))
    }

    /// A `cancel` arrived from `peer` with its `sessionId` parameter (nil when absent).
    public mutating func cancelReceived(from peer: LocalSendPeer, session: LocalSendSecret?) -> CancelAction {
        switch state {
        case .idle:
            return .refuse(.forbidden, reason: "no session")
        case .awaitingConsent(let pending):
            guard pending.peer.isSame(as: peer) else { return .refuse(.forbidden, reason: "not this session's peer") }
            // The sender does not know the session ID before consent: a cancel without one is its own.
            if let session, !pending.session.matches(session) {
                return .refuse(.forbidden, reason: "wrong session ID")
            }
            state = .idle
            return .cancel(session: pending.session)
        case .receiving(let active):
            guard active.peer.isSame(as: peer) else { return .refuse(.forbidden, reason: "not this session's peer") }
            guard let session, active.session.matches(session) else {
                return .refuse(.forbidden, reason: "wrong or missing session ID")
            }
            state = .idle
            return .cancel(session: active.session)
        }
    }

    /// The receiver's user stopped the session (`ferry receive` interrupted): the driver notifies the sender.
    public mutating func stopRequested() -> LocalSendSecret? {
        switch state {
        case .idle: return nil
        case .awaitingConsent(let pending):
            state = .idle
            return pending.session
        case .receiving(let active):
            state = .idle
            return active.session
        }
    }

    /// The timer set for `nextDeadline` fired (or any later instant).
    public mutating func timerFired(now: ContinuousClock.Instant) -> TimerAction? {
        switch state {
        case .idle:
            return nil
        case .awaitingConsent(let pending):
            guard pending.since.advanced(by: limits.consentTimeout) <= now else { return nil }
            state = .idle
            return .consentExpired(session: pending.session)
        case .receiving(let active):
            guard active.lastActivity.advanced(by: limits.idleTimeout) <= now else { return nil }
            state = .idle
            return .sessionAbandoned(session: active.session)
        }
    }

    private static func outcomes(of active: Active) -> [String: LocalSendFileOutcome] {
        active.slots.mapValues { slot in
            switch slot {
            case .declined: return .declined
            case .ended(let outcome): return outcome
            case .waiting, .uploading: return .failed
            }
        }
    }
}
