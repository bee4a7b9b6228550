import FerrySecurity
import FerryStateMachines
import FerryTransfer
import FerryWire
import Foundation

/// The one LocalSend receive session of a server: the pure `LocalSendReceiver` machine, and the transfer engine's
/// side of it (the session's `ForeignPeer`, its transfer, which file ID is which file, the results of files).
///
/// Every connection's requests come here; the actor performs the machine's actions: consent through the engine's
/// `offer` (its accept policy asks or decides), uploads into `ForeignPeer.write`/`endFile`, a cancel or a timeout
/// into `cancel`/`detach`. Nothing the peer wrote in JSON is identity: the peer is `LocalSendPeer` (its
/// certificate's hash; a peer without a certificate sends nothing) and its device ID the certificate's hash.
actor LocalSendSessions {
    /// The engine's side of the current session.
    private struct Current {
        var session: LocalSendSecret
        var foreign: ForeignPeer
        var transferID: TransferID?
        /// File ID -> index in the offer.
        var indices: [String: Int]
        var results: [Int: FileResult] = [:]
        var waiters: [Int: CheckedContinuation<FileResult?, Never>] = [:]
        var answers: Task<Void, Never>?
        var ended = false
    }

    /// An upload the machine let through: where its bytes go.
    struct Upload: Sendable {
        let session: LocalSendSecret
        let fileID: String
        let size: UInt64
        let foreign: ForeignPeer
        let transferID: TransferID
        let index: Int
    }

    /// What a route answers.
    struct Answer: Error, Sendable {
        var status: HTTPStatus
        var body: [UInt8]

        static func json(_ status: HTTPStatus, _ body: [UInt8]) -> Answer { Answer(status: status, body: body) }
        static func message(_ status: HTTPStatus, _ text: String) -> Answer {
            Answer(status: status, body: LocalSendErrorBody(message: text).encoded())
        }
    }

    private let engine: TransferEngine
    private let configuration: LocalSendServerConfiguration
    private var machine: LocalSendReceiver
    private var generator = SystemRandomNumberGenerator()
    private var current: Current?
    private var ticker: Task<Void, Never>?

    init(engine: TransferEngine, configuration: LocalSendServerConfiguration) {
        self.engine = engine
        self.configuration = configuration
        machine = LocalSendReceiver(pin: configuration.pin, limits: configuration.sessionLimits)
    }

    // MARK: prepare-upload

    /// A `prepare-upload` from `peer`: the machine's PIN, 409 and file checks, then consent through the engine
    /// (held until the accept policy decided), then the session ID and a token per accepted file.
    func prepareUpload(_ request: LocalSendPrepareUpload, from peer: LocalSendPeer, pin: String?) async -> Answer {
        // The digests are checked before the machine opens a session: a malformed one is the request's fault.
        var digests: [[UInt8]?] = []
        for file in request.files {
            guard let text = file.sha256 else {
                digests.append(nil)
                continue
            }
            guard let digest = Self.digest(hex: text) else {
                return .message(.badRequest, "file \(file.id): sha256 is not 64 hexadecimal digits")
            }
            digests.append(digest)
        }
        // Files only from a peer with an identity (the connection refuses one without a certificate from the head;
        // checked here too, so that no session ever has a peer without one).
        guard let identity = identity(of: peer, alias: request.info.alias) else {
            return .message(.forbidden, LocalSendConnection.certificateNeeded)
        }
        let message = Self.message(in: request)
        // A text is shown whole as a ferry message or not at all: one longer than a message carries (the `preview`
        // bound is 1 MiB, a message's 64 KiB) is refused before the machine or the engine sees it, never kept as a
        // file. 413: the apps show their generic error with this reason (403 would say "declined").
        if let message, message.utf8.count > Payload.maxMessageBytes {
            return .message(
                .payloadTooLarge,
                "the text is \(message.utf8.count) bytes; a message is at most \(Payload.maxMessageBytes) bytes "
                    + "(send it as a file)")
        }
        let offers = request.files.map { LocalSendFileOffer(id: $0.id, size: UInt64($0.size)) }
        switch machine.prepareUploadReceived(from: peer, files: offers, pin: pin, now: .now, using: &generator) {
        case .respond(let status, let reason):
            return .message(HTTPStatus(localSend: status), reason)
        case .askConsent(let session, _):
            let foreign = await engine.attachForeignPeer(identity)
            var indices: [String: Int] = [:]
            for (index, file) in request.files.enumerated() { indices[file.id] = index }
            var entry = Current(session: session, foreign: foreign, indices: indices)
            entry.answers = Task { [weak self] in
                for await message in foreign.answers { await self?.answered(message, session: session) }
                await self?.answersEnded(session: session)
            }
            current = entry
            startTicker()
            if let message {
                return await deliver(
                    message, id: request.files[0].id, named: request.files[0].fileName, from: peer, session: session,
                    foreign: foreign)
            }
            let files = zip(request.files, digests).map { file, digest in
                ForeignFile(
                    path: file.fileName, size: UInt64(file.size), modificationTime: Self.modificationTime(file.modified),
                    mediaType: String(file.fileType.prefix(255)), sha256: digest)
            }
            let (transferID, reply) = await foreign.offer(files)
            return consentDecided(session: session, transferID: transferID, reply: reply)
        }
    }

    /// The text of a message, when `request` is one as the apps send it: one file of a `text` media type
    /// (`text/plain`; `text` from v1 senders) whose `preview` is the text (`send_provider.dart` embeds a single
    /// text into the preview and expects 204, "read and close", with no upload after it).
    static func message(in request: LocalSendPrepareUpload) -> String? {
        guard request.files.count == 1, let file = request.files.first, let text = file.preview else { return nil }
        let type = file.fileType.lowercased()
        guard type == "text" || type.hasPrefix("text/") else { return nil }
        return text
    }

    /// Delivers a LocalSend text message as ferry's own `--text` messages are: one entry of ferry's message media
    /// type offered through the engine (the accept policy asks or decides; the prompt says "a message"), its bytes
    /// taken from the `preview`, verified by their SHA-256, then shown by the application (`message` event; kept as
    /// a file only where ferry keeps messages, `MemoryDelivery`). Answers 204 once shown, as the apps expect; 403
    /// when declined, or when the session ended (cancelled, consent timed out, the receiver stopped) while the offer
    /// waited for consent: its transfer is then cancelled and nothing is written.
    ///
    /// Once accepted, the machine takes the message as a session of one file uploaded from the `preview` (its token
    /// is never told to anyone): the consent timer no longer runs for it, and it ends as an upload does.
    private func deliver(
        _ text: String, id fileID: String, named name: String, from peer: LocalSendPeer, session: LocalSendSecret,
        foreign: ForeignPeer
    ) async -> Answer {
        let bytes = Array(text.utf8)
        let file = ForeignFile(
            path: name, size: UInt64(bytes.count), modificationTime: Self.modificationTime(nil),
            mediaType: Payload.messageMediaType,
            sha256: SHA256Hasher.digest(bytes))
        let (transferID, reply) = await foreign.offer([file])
        guard let reply, reply.accepted, reply.files.first?.accepted == true else {
            return consentDecided(session: session, transferID: transferID, reply: reply)
        }
        // The offer awaited consent: the session may have ended meanwhile (and another begun). The machine's
        // consent is given only if it still waits for this session's.
        guard current?.session == session,
            case .accept(_, let tokens) = machine.consentGiven(
                session: session, accepted: [fileID], now: .now, using: &generator),
            case .receive = machine.uploadReceived(
                from: peer, session: session, fileID: fileID, token: tokens[fileID], now: .now)
        else {
            await foreign.cancel(
                transferID, reason: .cancelledByUser, detail: "the LocalSend session ended before the message was taken"
            )
            end(session, reason: "ended before the message was taken")
            return .message(.forbidden, "the session was cancelled or timed out before consent")
        }
        current?.transferID = transferID
        var failure: String?
        do {
            if !bytes.isEmpty { try await foreign.write(bytes[...], file: 0, of: transferID) }
            try await foreign.endFile(0, of: transferID)
        } catch {
            failure = "\(error)"
        }
        let upload = Upload(
            session: session, fileID: fileID, size: UInt64(bytes.count), foreign: foreign, transferID: transferID,
            index: 0)
        let result = await result(of: upload)
        let shown = failure == nil && result?.status == .published
        // Only this session's: a cancel or the idle timer may have ended it during the awaits above.
        if current?.session == session {
            _ = machine.uploadEnded(fileID: fileID, outcome: shown ? .received : .failed, now: .now)
            end(session, reason: "a message")
        }
        guard shown else {
            let why = result.map { $0.detail.isEmpty ? $0.status.description : "\($0.status): \($0.detail)" }
            return .message(.internalServerError, "not shown: " + (failure ?? why ?? "the session ended"))
        }
        return Answer(status: .noContent, body: [])
    }

    private func consentDecided(session: LocalSendSecret, transferID: TransferID, reply: OfferReply?) -> Answer {
        guard let reply else {
            // Detached meanwhile (cancelled, timed out, the engine stopped): the machine may still wait.
            _ = machine.consentRefused(session: session)
            end(session, reason: "no answer to the offer")
            return .message(.forbidden, "the session was cancelled or timed out before consent")
        }
        let action: LocalSendReceiver.ConsentAction
        if reply.accepted {
            var accepted = Set<String>()
            for (fileID, index) in current?.indices ?? [:]
            where reply.files.indices.contains(index) && reply.files[index].accepted {
                accepted.insert(fileID)
            }
            action = machine.consentGiven(session: session, accepted: accepted, now: .now, using: &generator)
        } else {
            action = machine.consentRefused(session: session)
        }
        switch action {
        case .accept(let session, let tokens):
            current?.transferID = transferID
            let reply = LocalSendPrepareUploadReply(
                sessionID: session.description,
                tokens: tokens.sorted { $0.key < $1.key }.map { (fileID: $0.key, token: $0.value.description) })
            return .json(.ok, reply.encoded())
        case .respond(let status, let reason):
            end(session, reason: reason)
            let why = reply.accepted || reply.detail.isEmpty ? reason : "\(reason): \(reply.detail)"
            return .message(HTTPStatus(localSend: status), why)
        case .ignore:
            end(session, reason: "cancelled or timed out before consent")
            return .message(.forbidden, "the session was cancelled or timed out before consent")
        }
    }

    // MARK: upload

    /// An `upload`'s query from `peer`: the machine checks session ID, token, file and peer (once per file).
    func beginUpload(_ query: LocalSendQuery, from peer: LocalSendPeer) -> Result<Upload, Answer> {
        let action = machine.uploadReceived(
            from: peer, session: query.sessionID.flatMap(LocalSendSecret.init(hex:)), fileID: query.fileID,
            token: query.token.flatMap(LocalSendSecret.init(hex:)), now: .now)
        switch action {
        case .refuse(let status, let reason):
            return .failure(.message(HTTPStatus(localSend: status), reason))
        case .receive(let fileID, let size):
            guard let current, let transferID = current.transferID, let index = current.indices[fileID] else {
                return .failure(.message(.conflict, "no session"))
            }
            return .success(
                Upload(
                    session: current.session, fileID: fileID, size: size, foreign: current.foreign,
                    transferID: transferID, index: index))
        }
    }

    /// Body bytes of an upload arrived: the session is alive.
    func progressed() {
        machine.uploadProgressed(now: .now)
    }

    /// The body of `upload` ended after all its bytes: the engine verifies and publishes the file; answers once its
    /// result came (200 only when published).
    func finishUpload(_ upload: Upload) async -> Answer {
        var failure: String?
        do {
            try await upload.foreign.endFile(upload.index, of: upload.transferID)
        } catch {
            failure = "\(error)"
        }
        let result = await result(of: upload)
        let published = failure == nil && result?.status == .published
        // Only while this upload's session is the current one: it may have ended (and another begun) meanwhile.
        if current?.session == upload.session,
            machine.uploadEnded(fileID: upload.fileID, outcome: published ? .received : .failed, now: .now) != nil
        {
            end(upload.session, reason: "every file ended")
        }
        if published { return Answer(status: .ok, body: []) }
        let why = result.map { $0.detail.isEmpty ? $0.status.description : "\($0.status): \($0.detail)" }
        return .message(.internalServerError, "not stored: " + (failure ?? why ?? "the session ended"))
    }

    /// An upload that cannot go on (its body broke after `received` bytes, was too long, the connection went): that
    /// file fails alone, its staged data removed and its outcome saying how far it came and why; the session's
    /// other files go on, as the apps' own receiver does (`receive_controller.dart` marks the file failed and ends
    /// the session when every file is finished, skipped or failed). LocalSend has no resume, and the file's token was
    /// spent when its upload began: a retry with it is refused 409 (the apps remove the token then too).
    func failUpload(_ upload: Upload, received: UInt64, reason: String) async {
        guard current?.session == upload.session else { return }
        await upload.foreign.failFile(
            upload.index, of: upload.transferID,
            detail: "its upload broke after \(received) of \(upload.size) bytes (\(reason))")
        // Checked again after the await: the session may have ended (and another begun) meanwhile.
        guard current?.session == upload.session else { return }
        if machine.uploadEnded(fileID: upload.fileID, outcome: .failed, now: .now) != nil {
            end(upload.session, reason: "every file ended")
        }
    }

    private func result(of upload: Upload) async -> FileResult? {
        guard var entry = current, entry.session == upload.session else { return nil }
        if let result = entry.results.removeValue(forKey: upload.index) {
            current = entry
            return result
        }
        if entry.ended { return nil }
        return await withCheckedContinuation { continuation in
            current?.waiters[upload.index] = continuation
        }
    }

    private func answered(_ message: TransferMessage, session: LocalSendSecret) {
        guard current?.session == session else { return }
        switch message {
        case .fileResult(let result):
            let index = Int(result.fileIndex)
            if let waiter = current?.waiters.removeValue(forKey: index) {
                waiter.resume(returning: result)
            } else {
                current?.results[index] = result
            }
        default:
            break
        }
    }

    private func answersEnded(session: LocalSendSecret) {
        guard current?.session == session else { return }
        current?.ended = true
        for waiter in current?.waiters.values ?? [:].values { waiter.resume(returning: nil) }
        current?.waiters = [:]
    }

    // MARK: cancel, timers, stop

    /// A `cancel` from `peer`: only the session's own peer, with its session ID once it knows it.
    func cancel(_ query: LocalSendQuery, from peer: LocalSendPeer) async -> Answer {
        switch machine.cancelReceived(from: peer, session: query.sessionID.flatMap(LocalSendSecret.init(hex:))) {
        case .refuse(let status, let reason):
            return .message(HTTPStatus(localSend: status), reason)
        case .cancel(let session):
            await cancelTransfer(reason: .cancelledByUser, detail: "the LocalSend sender cancelled")
            end(session, reason: "cancelled by the sender")
            return Answer(status: .ok, body: [])
        }
    }

    /// Ends the session on our side (the server stops).
    func stop() async {
        ticker?.cancel()
        ticker = nil
        guard let session = machine.stopRequested() ?? current?.session else { return }
        await cancelTransfer(reason: .shuttingDown, detail: "the receiver stopped")
        end(session, reason: "the receiver stopped")
    }

    private func startTicker() {
        guard ticker == nil else { return }
        ticker = Task { [weak self] in
            // The machine's deadlines are in seconds; a tick a second is their resolution.
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await self?.tick()
            }
        }
    }

    private func tick() async {
        switch machine.timerFired(now: .now) {
        case .consentExpired(let session)?:
            end(session, reason: "consent timed out")
        case .sessionAbandoned(let session)?:
            await cancelTransfer(reason: .timedOut, detail: "the LocalSend sender went quiet")
            end(session, reason: "the sender went quiet")
        case nil:
            if !machine.isBusy, current == nil {
                ticker?.cancel()
                ticker = nil
            }
        }
    }

    private func cancelTransfer(reason: CancelReason, detail: String) async {
        guard let entry = current, let transferID = entry.transferID else { return }
        await entry.foreign.cancel(transferID, reason: reason, detail: detail)
    }

    /// Forgets the session `session` and detaches its peer from the engine (what was verified stays published, the
    /// rest of its staged data is removed); a held `prepare-upload` gets no consent.
    private func end(_ session: LocalSendSecret, reason: String) {
        guard let entry = current, entry.session == session else { return }
        current = nil
        for waiter in entry.waiters.values { waiter.resume(returning: nil) }
        let foreign = entry.foreign
        Task { await foreign.detach(reason: reason) }
        configuration.log?(2, "LocalSend session ended: \(reason)")
    }

    // MARK: identity

    /// The engine's view of `peer`: device ID = the certificate's hash; trusted iff pinned; the alias only as a name.
    /// Nil for a peer without a certificate: it has no identity, and sends no files (`LocalSendConnection` refuses
    /// it from the request's head).
    private func identity(of peer: LocalSendPeer, alias: String) -> ForeignPeerIdentity? {
        guard let hex = peer.certificateFingerprint, let fingerprint = LocalSendFingerprint(hex: hex) else {
            return nil
        }
        return ForeignPeerIdentity(
            deviceID: fingerprint.deviceID, displayName: alias.isEmpty ? LocalSendServer.unnamedDeviceName : alias,
            isTrusted: configuration.isTrusted(fingerprint.deviceID), protocolName: "localsend")
    }

    /// 32 bytes from 64 hex digits (either case), else nil.
    static func digest(hex text: String) -> [UInt8]? {
        guard text.utf8.count == 64 else { return nil }
        return Hex.bytes(text.utf8)
    }

    /// The file's `metadata.modified` (ISO 8601), else now (LocalSend senders that give none: the moment it came).
    static func modificationTime(_ text: String?) -> FileTime {
        let now = Date().timeIntervalSince1970
        var seconds = now
        if let text {
            let parser = ISO8601DateFormatter()
            parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = parser.date(from: text) ?? ISO8601DateFormatter().date(from: text) {
                seconds = date.timeIntervalSince1970
            }
        }
        let whole = seconds.rounded(.down)
        return FileTime(seconds: Int64(whole), nanoseconds: UInt32(min(999_999_999, (seconds - whole) * 1e9)))
    }
}

extension HTTPStatus {
    /// The HTTP status of a machine's answer.
    init(localSend status: LocalSendStatus) {
        switch status {
        case .ok: self = .ok
        case .noContent: self = .noContent
        case .badRequest: self = .badRequest
        case .unauthorized: self = .unauthorized
        case .forbidden: self = .forbidden
        case .conflict: self = .conflict
        case .tooManyRequests: self = .tooManyRequests
        default: self = HTTPStatus(code: status.rawValue, reason: "Error")
        }
    }
}
