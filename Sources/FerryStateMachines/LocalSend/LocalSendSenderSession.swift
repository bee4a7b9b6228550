/// The sending side of one LocalSend `prepare-upload` exchange, as a pure value: what each answer of the receiver
/// means and what the driver (`LocalSendSender`, module FerryLocalSend) does next (docs/LOCALSEND.md, "Sending").
///
/// What it promises:
/// - 200 with tokens: upload the files that got one (the others were declined by the receiver).
/// - 204: nothing to upload (the receiver wants none of the files, or, for a text, has shown it).
/// - 401: the receiver wants a PIN. Ask for one (`askPin(wrong: false)` the first time) and repeat the request
///   with it; a PIN refused is asked again, at most `maxPinAttempts` PINs in all, then the send stops
///   (`pinRefused`). When no PIN can be had (none given, nobody to ask) it stops (`pinRequired`).
/// - 429: the receiver blocks PIN attempts from us for a while: stop, never retry.
/// - 403: the person there (or its policy) refused; 409: the receiver is busy with another session; any other
///   status: refused with that status. Each stops the send; nothing was uploaded.
public struct LocalSendSenderSession: Sendable {
    /// PINs tried at most for one send (LocalSend's own receivers block an address after 3 wrong ones).
    public static let maxPinAttempts = 3

    /// What the receiver answered to a `prepare-upload`.
    public enum Answer: Equatable, Sendable {
        /// 200: the session and a token per file it takes.
        case accepted(sessionID: String, fileIDs: [String])
        /// 204: it takes nothing (or showed the text).
        case nothingWanted
        /// Any other status (4xx, 5xx).
        case status(Int)
    }

    /// Why a send stopped before any upload.
    public enum Stop: Equatable, Sendable {
        /// The receiver wants a PIN and none could be had.
        case pinRequired
        /// `attempts` PINs were refused and no more may be tried.
        case pinRefused(attempts: Int)
        /// 429: the receiver refuses PIN attempts from us for a while.
        case pinBlocked
        /// 403: declined by the person there, or by the receiver's policy.
        case declined
        /// 409: the receiver is busy with another session.
        case busy
        /// Another status.
        case rejected(status: Int)
    }

    /// What the driver does next.
    public enum Step: Equatable, Sendable {
        /// Upload these files (the receiver's order of the tokens) in session `sessionID`.
        case upload(sessionID: String, fileIDs: [String])
        /// Nothing to upload; the exchange is over.
        case nothingToUpload
        /// Get a PIN (`wrong`: the last one was refused) and call `pin(_:)` or `noPin()`.
        case askPin(wrong: Bool)
        /// Send `prepare-upload` again, with the PIN given.
        case repeatRequest(pin: String)
        /// The send is over without uploads.
        case stop(Stop)
    }

    /// PINs sent so far.
    public private(set) var pinAttempts = 0
    /// The PIN the next request carries, if any.
    public private(set) var pin: String?

    /// A session before the first request (sent without a PIN).
    public init() {}

    /// The receiver answered the request last sent.
    public mutating func answered(_ answer: Answer) -> Step {
        switch answer {
        case .accepted(let sessionID, let fileIDs):
            return fileIDs.isEmpty ? .nothingToUpload : .upload(sessionID: sessionID, fileIDs: fileIDs)
        case .nothingWanted:
            return .nothingToUpload
        case .status(401):
            guard pinAttempts < Self.maxPinAttempts else { return .stop(.pinRefused(attempts: pinAttempts)) }
            return .askPin(wrong: pinAttempts > 0)
        case .status(429): return .stop(.pinBlocked)
        case .status(403): return .stop(.declined)
        case .status(409): return .stop(.busy)
        case .status(let code): return .stop(.rejected(status: code))
        }
    }

    /// A PIN was had after `askPin`: the request is repeated with it.
    public mutating func pin(_ value: String) -> Step {
        pinAttempts += 1
        pin = value
        return .repeatRequest(pin: value)
    }

    /// No PIN could be had after `askPin`.
    public mutating func noPin() -> Step {
        .stop(pinAttempts == 0 ? .pinRequired : .pinRefused(attempts: pinAttempts))
    }
}
