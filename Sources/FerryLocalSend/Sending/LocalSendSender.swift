import FerryHTTPClient
import FerrySecurity
import FerryStateMachines
import FerryWire
import Glibc

/// A LocalSend receiver to send to: where it listens and the certificate it must present.
public struct LocalSendDestination: Sendable, Equatable {
    /// Its address (IPv4 dotted, or IPv6 without brackets).
    public var host: String
    /// Its HTTPS port (53317 unless it announced another).
    public var port: UInt16
    /// The SHA-256 of the certificate it must present; checked in the handshake, before a request byte.
    public var fingerprint: LocalSendFingerprint
    /// Its announced `protocol`: only "https" is sent to.
    public var scheme: String

    /// A receiver at `host`:`port` presenting the certificate `fingerprint` names.
    public init(host: String, port: UInt16, fingerprint: LocalSendFingerprint, scheme: String = "https") {
        self.host = host
        self.port = port
        self.fingerprint = fingerprint
        self.scheme = scheme
    }

    /// `https://HOST:PORT` (brackets around an IPv6 address).
    var origin: String {
        "https://" + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

/// Why a file could not be offered.
public enum LocalSendSendError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened or read.
    case unreadable(path: String, reason: String)
    /// The send was cancelled while the file was hashed.
    case cancelled

    /// One line for people.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .cancelled: return "cancelled"
        }
    }
}

/// Why the certificate of a LocalSend receiver could not be learned (cannot connect, no TLS).
public struct LocalSendProbeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One line for people.
    public let description: String
}

/// What became of one send to one LocalSend receiver.
public struct LocalSendSendResult: Sendable, Equatable {
    /// What became of one file.
    public enum Outcome: Sendable, Equatable {
        /// Uploaded, and the receiver answered 200.
        case sent
        /// A text the receiver showed (204 to a text).
        case shown
        /// The receiver declined it (no token for it, or 204 to files): it did not arrive, a failure for that file.
        case skipped
        /// Its upload failed, for this reason (422: the receiver's SHA-256 check failed).
        case failed(String)
        /// Not uploaded: the send stopped before it (refused, cancelled, an earlier upload failed).
        case notSent
    }

    /// Each item's outcome, in the order given.
    public var outcomes: [Outcome]
    /// Why the send stopped before its uploads (the receiver's answer to `prepare-upload`), if it did.
    public var stop: LocalSendSenderSession.Stop?
    /// What went wrong for the whole send, for people; nil when every file went (or was skipped or shown).
    public var failure: String?
    /// Bytes the receiver took (files that answered 200).
    public var bytesSent: Int64
    /// Whether the send was cancelled (Ctrl-C).
    public var cancelled: Bool

    /// Whether every item arrived (a shown text counts as done; a declined file does not).
    public var isSuccess: Bool {
        failure == nil
            && outcomes.allSatisfy { outcome in
                switch outcome {
                case .sent, .shown: return true
                case .skipped, .failed, .notSent: return false
                }
            }
    }
}

/// Sends files and texts to one LocalSend receiver (ferry to a phone; docs/LOCALSEND.md, "Sending"): HTTPS only,
/// the receiver's certificate pinned inside every handshake (`HTTPSClient`), `prepare-upload` with our device and
/// each file's SHA-256, the PIN asked through a callback when the receiver wants one (`LocalSendSenderSession`
/// decides what each answer means), then each accepted file uploaded in turn, streamed from the file
/// (`HTTPSClient.upload` reads it piece by piece: never the whole file in memory). A failed upload (other than a
/// failed SHA-256 check, 422, which fails that file only) or a cancellation ends the session with `cancel`.
public struct LocalSendSender: Sendable {
    /// The client presenting our LocalSend certificate.
    public let client: HTTPSClient
    /// Our device as the receiver sees it in `info`.
    public let device: LocalSendDevice
    /// How long a `prepare-upload` may wait for its answer (a person on the other side decides first).
    public var answerTimeout: Duration = .seconds(600)

    /// A sender with `identity`'s certificate, introducing itself as `device` (its fingerprint is set from the
    /// identity whatever `device` says).
    /// Answers are read up to the prepare-upload reply's own bound (4 MiB: a token per file for thousands of files;
    /// HTTPSClient's default 64 KiB holds about 1300), whatever `limits` says less.
    public init(identity: LocalSendIdentity, device: LocalSendDevice, limits: HTTPSClient.Limits = .init()) {
        var limits = limits
        limits.maxResponseBytes = max(limits.maxResponseBytes, LocalSendLimits.maxPrepareUploadBytes)
        client = HTTPSClient(identity: identity, limits: limits)
        var device = device
        device.fingerprint = identity.fingerprint.description
        device.announce = nil
        self.device = device
    }

    /// Our device for a sender named `alias`: version 2.1, model "ferry", the given type, our fingerprint, the
    /// port of our (possibly absent) LocalSend server, HTTPS, no download API.
    public static func device(alias: String, identity: LocalSendIdentity, deviceType: String = "desktop")
        -> LocalSendDevice
    {
        LocalSendDevice(
            alias: alias, version: "2.1", deviceModel: "ferry", deviceType: deviceType,
            fingerprint: identity.fingerprint.description, port: Int(LocalSendDiscovery.port), scheme: "https",
            download: false)
    }

    /// The prepare-upload body for `items` (file IDs "0", "1", ... in order).
    public func prepareUpload(_ items: [LocalSendOutgoing]) -> LocalSendPrepareUpload {
        let files = items.enumerated().map { index, item in
            var preview: String?
            if case .text(let text) = item.source { preview = text }
            return LocalSendFile(
                id: String(index), fileName: item.name, size: item.size, fileType: item.fileType,
                sha256: item.sha256, preview: preview)
        }
        return LocalSendPrepareUpload(info: device, files: files)
    }

    /// Sends `items` to `destination`. `pin`, when known beforehand (`--pin-file`), goes only to a receiver that
    /// asks for one (answers 401), in the repeated request, and only once (a second 401 refuses it): a receiver
    /// without a PIN never sees it. (localsendd counts the first request, without a PIN, as a wrong attempt: one of
    /// its 3 a minute; the right PIN next clears them.) Otherwise `askPin(wrong)` gets a PIN when the receiver wants
    /// one (nil: none can be had); `progress(index, bytes)` gets the bytes of item `index` sent so far, from
    /// libcurl's thread.
    public func send(
        _ items: [LocalSendOutgoing], to destination: LocalSendDestination, pin knownPin: String? = nil,
        askPin: @escaping @Sendable (_ wrong: Bool) async -> String?,
        progress: @escaping @Sendable (_ index: Int, _ bytes: Int64) -> Void = { _, _ in }
    ) async -> LocalSendSendResult {
        var result = LocalSendSendResult(
            outcomes: Array(repeating: .notSent, count: items.count), stop: nil, failure: nil, bytesSent: 0,
            cancelled: false)
        guard destination.scheme == "https" else {
            result.failure =
                "it has encryption off (protocol \(destination.scheme)); ferry speaks HTTPS only and sends nothing"
                + " over plain HTTP"
            return result
        }
        let body = prepareUpload(items).encoded()
        var session = LocalSendSenderSession()
        var pin: String?
        var step = LocalSendSenderSession.Step.repeatRequest(pin: "")
        while true {
            switch step {
            case .repeatRequest(let given):
                if !given.isEmpty || session.pinAttempts > 0 { pin = given }
                let url =
                    destination.origin + "/api/localsend/v2/prepare-upload" + LocalSendQuery(pin: pin).encoded
                do {
                    let response = try await client.postJSON(
                        to: url, pinned: destination.fingerprint, json: body, timeout: answerTimeout)
                    if response.status == 204 {
                        step = session.answered(.nothingWanted)
                        if step == .nothingToUpload {
                            result.outcomes = items.map { if case .text = $0.source { .shown } else { .skipped } }
                            return result
                        }
                        continue
                    }
                    let reply: LocalSendPrepareUploadReply
                    do {
                        reply = try LocalSendPrepareUploadReply(json: response.body[...])
                    } catch {
                        result.failure = "the receiver's answer to prepare-upload is not valid: \(error)"
                        return result
                    }
                    let known = Set(items.indices.map(String.init))
                    let fileIDs = reply.tokens.map(\.fileID).filter { known.contains($0) }
                    step = session.answered(.accepted(sessionID: reply.sessionID, fileIDs: fileIDs))
                    if case .upload = step {
                        return await upload(
                            items, reply: reply, to: destination, result: result, progress: progress)
                    }
                    result.outcomes = items.map { _ in .skipped }
                    return result
                } catch .status(let code, _) {
                    step = session.answered(.status(code))
                } catch .cancelled {
                    result.cancelled = true
                    result.failure = "cancelled"
                    return result
                } catch {
                    result.failure = error.description
                    return result
                }
            case .askPin(let wrong):
                if let knownPin, !knownPin.isEmpty {
                    step = wrong ? session.noPin() : session.pin(knownPin)
                } else if let given = await askPin(wrong), !given.isEmpty {
                    step = session.pin(given)
                } else {
                    step = session.noPin()
                }
                if Task.isCancelled {
                    result.cancelled = true
                    result.failure = "cancelled"
                    return result
                }
            case .stop(let stop):
                result.stop = stop
                result.failure = Self.text(stop)
                return result
            case .nothingToUpload, .upload:
                return result  // handled where the answer arrives
            }
        }
    }

    /// Uploads each item with a token, in order; 422 fails that file, another failure or a cancellation ends the
    /// session (`cancel`, best effort) and leaves the rest not sent.
    private func upload(
        _ items: [LocalSendOutgoing], reply: LocalSendPrepareUploadReply, to destination: LocalSendDestination,
        result: LocalSendSendResult, progress: @escaping @Sendable (Int, Int64) -> Void
    ) async -> LocalSendSendResult {
        var result = result
        let tokens = Dictionary(reply.tokens.map { ($0.fileID, $0.token) }, uniquingKeysWith: { first, _ in first })
        for index in items.indices where tokens[String(index)] == nil { result.outcomes[index] = .skipped }
        var ended = false
        for (index, item) in items.enumerated() {
            guard let token = tokens[String(index)] else { continue }
            if Task.isCancelled {
                result.cancelled = true
                ended = true
                break
            }
            let query = LocalSendQuery(sessionID: reply.sessionID, fileID: String(index), token: token)
            let url = destination.origin + "/api/localsend/v2/upload" + query.encoded
            do {
                try await uploadOne(item, index: index, url: url, pinned: destination.fingerprint, progress: progress)
                result.outcomes[index] = .sent
                result.bytesSent += item.size
            } catch .status(422, _) {
                result.outcomes[index] = .failed(
                    "the receiver's SHA-256 check of the bytes it got failed (HTTP 422); it kept nothing of it")
            } catch .sourceFailed(let reason) where reason == HTTPSClient.changedText {
                // That file only: refused before a byte, or cut short before its last piece (the receiver keeps
                // nothing of a short body).
                result.outcomes[index] = .failed(reason)
            } catch .cancelled {
                result.cancelled = true
                ended = true
                break
            } catch {
                result.outcomes[index] = .failed(error.description)
                ended = true
                break
            }
        }
        if ended {
            if result.cancelled { result.failure = "cancelled" }
            await cancel(sessionID: reply.sessionID, at: destination)
        }
        return result
    }

    private func uploadOne(
        _ item: LocalSendOutgoing, index: Int, url: String, pinned: LocalSendFingerprint,
        progress: @escaping @Sendable (Int, Int64) -> Void
    ) async throws(HTTPSClientError) {
        switch item.source {
        case .text(let text):
            _ = try await client.upload(to: url, pinned: pinned, bytes: Array(text.utf8))
            progress(index, item.size)
        case .file(let path):
            // The file hashed, unchanged (device, inode, size, times; not a link swapped in), and its bytes checked
            // against the offered SHA-256 as they go out: the last piece is withheld if they differ.
            let noFollow = item.hashed?.viaLink == true ? 0 : O_NOFOLLOW
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | noFollow)
            guard descriptor >= 0 else {
                throw .sourceFailed("cannot open \(path): " + String(cString: strerror(errno)).lowercased())
            }
            defer { close(descriptor) }
            if let hashed = item.hashed, !hashed.matches(descriptor) {
                throw .sourceFailed(HTTPSClient.changedText)
            }
            _ = try await client.upload(
                to: url, pinned: pinned, descriptor: descriptor, length: item.size,
                sha256: item.digest.isEmpty ? nil : item.digest,
                progress: { progress(index, $0) })
        }
    }

    /// `POST /api/localsend/v2/cancel?sessionId=...`, best effort (its answer is not read), in a task of its own
    /// so that it goes out even while the caller is being cancelled.
    public func cancel(sessionID: String, at destination: LocalSendDestination) async {
        let url = destination.origin + "/api/localsend/v2/cancel" + LocalSendQuery(sessionID: sessionID).encoded
        let client = self.client
        await Task.detached {
            _ = try? await client.postJSON(
                to: url, pinned: destination.fingerprint, json: [], timeout: .seconds(5))
        }.value
    }

    /// The fingerprint of the certificate the server at `host`:`port` presents, learned by a TLS handshake that
    /// expects another (an impossible all-zero hash): the handshake fails at the certificate check, before our
    /// Finished, so no request byte is written. A failure to connect is the error's text.
    public func presentedCertificate(host: String, port: UInt16) async -> Result<
        LocalSendFingerprint, LocalSendProbeError
    > {
        guard let nobody = DeviceID(bytes: [UInt8](repeating: 0, count: 32)) else { preconditionFailure("32 bytes") }
        let destination = LocalSendDestination(
            host: host, port: port, fingerprint: LocalSendFingerprint(deviceID: nobody))
        do {
            _ = try await client.postJSON(
                to: destination.origin + "/api/localsend/v2/info", pinned: destination.fingerprint, json: [],
                timeout: .seconds(15))
            return .failure(LocalSendProbeError(description: "the server's certificate hashes to zero"))
        } catch .wrongCertificate(_, let presented) {
            return .success(presented)
        } catch {
            return .failure(LocalSendProbeError(description: error.description))
        }
    }

    /// One sentence for each way a send stops before its uploads.
    public static func text(_ stop: LocalSendSenderSession.Stop) -> String {
        switch stop {
        case .pinRequired:
            return "the receiver asks for a PIN and none was given; nothing was sent"
        case .pinRefused(let attempts):
            return
                "the receiver refused the PIN (\(attempts) \(attempts == 1 ? "attempt" : "attempts")); nothing was sent"
        case .pinBlocked:
            return "the receiver blocks PIN attempts from this device for a while after wrong PINs (HTTP 429); try"
                + " again in a minute; nothing was sent"
        case .declined:
            return
                "refused by the receiver (the person there declined, or its settings did; HTTP 403); nothing was sent"
        case .busy:
            return "the receiver is busy with another session (HTTP 409); try again when it is done; nothing was sent"
        case .rejected(let status):
            return "the receiver answered prepare-upload with HTTP \(status); nothing was sent"
        }
    }
}
