import FerryStateMachines
import FerryTestSupport
import Testing

/// LocalSendReceiver, action by action: one session at a time, PIN bounds, consent before bytes, uploads only with
/// the right token from the right peer and once, cancel by the session's peer, the end, and the timeouts.
@Suite struct LocalSendReceiverTests {
    static let phone = LocalSendPeer(address: "10.0.0.7", certificateFingerprint: "AB12")
    static let stranger = LocalSendPeer(address: "10.0.0.9", certificateFingerprint: "CD34")
    static let files = [LocalSendFileOffer(id: "a", size: 10), LocalSendFileOffer(id: "b", size: 20)]

    /// One receiver, a seeded generator and a start instant, with helpers that open a session.
    struct Harness {
        var receiver = LocalSendReceiver(pin: nil)
        var random = SplitMix64(seed: 29)
        let start = ContinuousClock.now

        /// Prepares a session from `peer` for `files` and returns its ID.
        mutating func prepare(
            from peer: LocalSendPeer = LocalSendReceiverTests.phone,
            files: [LocalSendFileOffer] = LocalSendReceiverTests.files, pin: String? = nil
        ) throws -> LocalSendSecret {
            let action = receiver.prepareUploadReceived(from: peer, files: files, pin: pin, now: start, using: &random)
            guard case .askConsent(let session, _) = action else {
                Issue.record("expected askConsent, got \(action)")
                throw CancellationError()
            }
            return session
        }

        /// Prepares and accepts `accepted` (default: every file); returns the session and the tokens.
        mutating func accept(
            from peer: LocalSendPeer = LocalSendReceiverTests.phone, accepted: Set<String> = ["a", "b"]
        ) throws -> (LocalSendSecret, [String: LocalSendSecret]) {
            let session = try prepare(from: peer)
            let action = receiver.consentGiven(session: session, accepted: accepted, now: start, using: &random)
            guard case .accept(let id, let tokens) = action else {
                Issue.record("expected accept, got \(action)")
                throw CancellationError()
            }
            return (id, tokens)
        }
    }

    // MARK: one session at a time

    @Test func aSecondPrepareUploadWhileASessionWaitsForConsentIsAConflict() throws {
        var h = Harness()
        _ = try h.prepare()
        let second = h.receiver.prepareUploadReceived(
            from: Self.stranger, files: Self.files, pin: nil, now: h.start, using: &h.random)
        #expect(second == .respond(.conflict, reason: "blocked by another session"))
    }

    @Test func theSameSenderPreparingAgainDuringItsSessionIsAConflictAsTheAppsAnswer() throws {
        var h = Harness()
        _ = try h.accept()
        let again = h.receiver.prepareUploadReceived(
            from: Self.phone, files: Self.files, pin: nil, now: h.start, using: &h.random)
        #expect(again == .respond(.conflict, reason: "blocked by another session"))
    }

    @Test func aPrepareUploadWithoutFilesOrWithTooManyOrWithAnIDTwiceIsABadRequest() {
        var h = Harness()
        var small = LocalSendReceiver(pin: nil, limits: .init(maxFiles: 2))
        #expect(
            small.prepareUploadReceived(from: Self.phone, files: [], pin: nil, now: h.start, using: &h.random)
                == .respond(.badRequest, reason: "no files"))
        let three = (0..<3).map { LocalSendFileOffer(id: "f\($0)", size: 1) }
        #expect(
            small.prepareUploadReceived(from: Self.phone, files: three, pin: nil, now: h.start, using: &h.random)
                == .respond(.badRequest, reason: "3 files, at most 2 per session"))
        let twice = [LocalSendFileOffer(id: "x", size: 1), LocalSendFileOffer(id: "x", size: 2)]
        #expect(
            small.prepareUploadReceived(from: Self.phone, files: twice, pin: nil, now: h.start, using: &h.random)
                == .respond(.badRequest, reason: "file ID x twice"))
        #expect(!small.isBusy)
        #expect(LocalSendReceiver.Limits().maxFiles == 10_000)
    }

    // MARK: PIN

    @Test func aMissingOrWrongPinIsUnauthorizedAndTheRightOneOpensASession() {
        var h = Harness()
        h.receiver = LocalSendReceiver(pin: "4821")
        #expect(
            h.receiver.prepareUploadReceived(
                from: Self.phone, files: Self.files, pin: nil, now: h.start, using: &h.random)
                == .respond(.unauthorized, reason: "PIN required"))
        #expect(
            h.receiver.prepareUploadReceived(
                from: Self.phone, files: Self.files, pin: "1111", now: h.start, using: &h.random)
                == .respond(.unauthorized, reason: "wrong PIN"))
        let right = h.receiver.prepareUploadReceived(
            from: Self.phone, files: Self.files, pin: "4821", now: h.start, using: &h.random)
        guard case .askConsent = right else {
            Issue.record("expected askConsent, got \(right)")
            return
        }
    }

    @Test func aWrongPinIsToldBeforeTheReceiverSaysItIsBusy() throws {
        var h = Harness()
        h.receiver = LocalSendReceiver(pin: "4821")
        _ = try h.prepare(pin: "4821")
        #expect(
            h.receiver.prepareUploadReceived(
                from: Self.stranger, files: Self.files, pin: nil, now: h.start, using: &h.random)
                == .respond(.unauthorized, reason: "PIN required"))
    }

    @Test func threeWrongPinsFromOneAddressLockItOutEvenWithTheRightPinUntilTheWindowPassed() {
        var h = Harness()
        h.receiver = LocalSendReceiver(pin: "4821")
        for _ in 0..<LocalSendPinGuard.perAddress {
            _ = h.receiver.prepareUploadReceived(
                from: Self.phone, files: Self.files, pin: "0", now: h.start, using: &h.random)
        }
        #expect(
            h.receiver.prepareUploadReceived(
                from: Self.phone, files: Self.files, pin: "4821", now: h.start, using: &h.random)
                == .respond(.tooManyRequests, reason: "too many wrong PINs"))
        let other = h.receiver.prepareUploadReceived(
            from: Self.stranger, files: Self.files, pin: "4821", now: h.start, using: &h.random)
        guard case .askConsent = other else {
            Issue.record("another address is not locked out by one address's failures: \(other)")
            return
        }
        _ = h.receiver.stopRequested()
        let later = h.start.advanced(by: LocalSendPinGuard.window)
        let afterWindow = h.receiver.prepareUploadReceived(
            from: Self.phone, files: Self.files, pin: "4821", now: later, using: &h.random)
        guard case .askConsent = afterWindow else {
            Issue.record("expected the lockout to end after the window, got \(afterWindow)")
            return
        }
    }

    @Test func theRightPinFollowedByAMultipleOf256NulBytesIsRejected() {
        var pins = LocalSendPinGuard(expected: "4821")
        let now = ContinuousClock.now
        for padding in [1, 256, 512] {
            let given = "4821" + String(repeating: "\u{0}", count: padding)
            #expect(pins.check(given, from: "10.0.3.\(padding % 250)", now: now) == .rejected, "\(padding) NULs")
        }
        #expect(pins.check("4821", from: "10.0.3.9", now: now) == .accepted)
    }

    @Test func wrongPinsFromManyAddressesAreBoundedOverall() {
        var pins = LocalSendPinGuard(expected: "4821")
        let now = ContinuousClock.now
        for index in 0..<LocalSendPinGuard.overall {
            #expect(pins.check("0", from: "10.0.1.\(index)", now: now) == .rejected)
        }
        #expect(pins.check("4821", from: "10.0.2.1", now: now) == .lockedOut)
        #expect(pins.failureCount(now: now) == LocalSendPinGuard.overall)
        #expect(pins.check("4821", from: "10.0.2.1", now: now.advanced(by: LocalSendPinGuard.window)) == .accepted)
        #expect((LocalSendPinGuard.perAddress, LocalSendPinGuard.overall) == (3, 10))
    }

    // MARK: consent

    @Test func consentGivesEachAcceptedFileItsOwn128BitTokenAndDeclinedFilesNone() throws {
        var h = Harness()
        let (session, tokens) = try h.accept(accepted: ["b", "not-offered"])
        #expect(Array(tokens.keys) == ["b"])
        #expect(tokens["b"]?.bytes.count == 16 && session.bytes.count == 16)
        #expect(tokens["b"] != session)
        let declined = h.receiver.uploadReceived(
            from: Self.phone, session: session, fileID: "a", token: tokens["b"], now: h.start)
        #expect(declined == .refuse(.forbidden, reason: "file a is not accepted in this session"))
    }

    @Test func tokensComeFromTheInjectedGenerator() throws {
        var h = Harness()
        let (_, first) = try h.accept()
        var other = Harness()
        other.random = SplitMix64(seed: 29)
        let (_, second) = try other.accept()
        #expect(first == second)
        other.random = SplitMix64(seed: 30)
        _ = other.receiver.stopRequested()
        let (_, third) = try other.accept()
        #expect(third["a"] != first["a"])
    }

    @Test func declinedConsentAnswersForbiddenAndFreesTheReceiver() throws {
        var h = Harness()
        let session = try h.prepare()
        #expect(h.receiver.consentRefused(session: session) == .respond(.forbidden, reason: "declined"))
        #expect(!h.receiver.isBusy)
    }

    @Test func consentToNoFileAnswersNoContentAndEndsTheSession() throws {
        var h = Harness()
        let session = try h.prepare()
        #expect(
            h.receiver.consentGiven(session: session, accepted: [], now: h.start, using: &h.random)
                == .respond(.noContent, reason: "no file accepted"))
        #expect(!h.receiver.isBusy)
    }

    @Test func consentForASessionThatWasCancelledMeanwhileIsIgnored() throws {
        var h = Harness()
        let session = try h.prepare()
        #expect(h.receiver.cancelReceived(from: Self.phone, session: nil) == .cancel(session: session))
        #expect(h.receiver.consentGiven(session: session, accepted: ["a"], now: h.start, using: &h.random) == .ignore)
    }

    // MARK: uploads

    @Test func noUploadIsTakenBeforeConsent() throws {
        var h = Harness()
        let session = try h.prepare()
        let token = LocalSendSecret.random(using: &h.random)
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: token, now: h.start)
                == .refuse(.conflict, reason: "no consent yet"))
        var idle = LocalSendReceiver(pin: nil)
        #expect(
            idle.uploadReceived(from: Self.phone, session: session, fileID: "a", token: token, now: h.start)
                == .refuse(.conflict, reason: "no session"))
    }

    @Test func anUploadNeedsItsFilesTokenTheSessionIDAndEveryParameter() throws {
        var h = Harness()
        let (session, tokens) = try h.accept()
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["b"], now: h.start)
                == .refuse(.forbidden, reason: "wrong token"))
        let otherSession = LocalSendSecret.random(using: &h.random)
        #expect(
            h.receiver.uploadReceived(
                from: Self.phone, session: otherSession, fileID: "a", token: tokens["a"], now: h.start)
                == .refuse(.forbidden, reason: "wrong session ID"))
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: nil, token: tokens["a"], now: h.start)
                == .refuse(.badRequest, reason: "sessionId, fileId and token are required"))
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["a"], now: h.start)
                == .receive(fileID: "a", size: 10))
    }

    @Test func anotherPeersUploadWithTheRightTokenIsForbidden() throws {
        var h = Harness()
        let (session, tokens) = try h.accept()
        let sameAddressOtherCertificate = LocalSendPeer(address: Self.phone.address, certificateFingerprint: "EE")
        for intruder in [Self.stranger, sameAddressOtherCertificate, LocalSendPeer(address: Self.phone.address)] {
            let action = h.receiver.uploadReceived(
                from: intruder, session: session, fileID: "a", token: tokens["a"], now: h.start)
            guard case .refuse(.forbidden, _) = action else {
                Issue.record("\(intruder) was not refused: \(action)")
                continue
            }
        }
        let sameCertificateNewAddress = LocalSendPeer(address: "10.0.0.99", certificateFingerprint: "ab12")
        #expect(
            h.receiver.uploadReceived(
                from: sameCertificateNewAddress, session: session, fileID: "a", token: tokens["a"], now: h.start)
                == .receive(fileID: "a", size: 10))
    }

    @Test func withoutCertificatesThePeerIsItsAddress() throws {
        var h = Harness()
        let bare = LocalSendPeer(address: "10.0.0.5")
        let (session, tokens) = try h.accept(from: bare)
        #expect(
            h.receiver.uploadReceived(
                from: LocalSendPeer(address: "10.0.0.6"), session: session, fileID: "a", token: tokens["a"],
                now: h.start)
                == .refuse(.forbidden, reason: "not the peer of this session (10.0.0.6)"))
        #expect(
            h.receiver.uploadReceived(from: bare, session: session, fileID: "a", token: tokens["a"], now: h.start)
                == .receive(fileID: "a", size: 10))
    }

    @Test func eachFileIsUploadedOnceWhileItRunsAndAfterItEnded() throws {
        var h = Harness()
        let (session, tokens) = try h.accept()
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["a"], now: h.start)
                == .receive(fileID: "a", size: 10))
        let again = LocalSendReceiver.UploadAction.refuse(.conflict, reason: "file a was uploaded already")
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["a"], now: h.start)
                == again)
        #expect(h.receiver.uploadEnded(fileID: "a", outcome: .failed, now: h.start) == nil)
        #expect(
            h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["a"], now: h.start)
                == again)
    }

    @Test func theSessionEndsWhenEveryAcceptedFileIsReceivedOrFailed() throws {
        var h = Harness()
        let (session, tokens) = try h.accept(accepted: ["a", "b"])
        for id in ["a", "b"] {
            _ = h.receiver.uploadReceived(
                from: Self.phone, session: session, fileID: id, token: tokens[id], now: h.start)
        }
        #expect(h.receiver.uploadEnded(fileID: "a", outcome: .received, now: h.start) == nil)
        #expect(h.receiver.isBusy)
        let ended = h.receiver.uploadEnded(fileID: "b", outcome: .failed, now: h.start)
        #expect(ended == LocalSendReceiver.Ended(session: session, outcomes: ["a": .received, "b": .failed]))
        #expect(!h.receiver.isBusy)
        let next = h.receiver.prepareUploadReceived(
            from: Self.stranger, files: Self.files, pin: nil, now: h.start, using: &h.random)
        guard case .askConsent = next else {
            Issue.record("a new session should open after the end, got \(next)")
            return
        }
    }

    @Test func declinedFilesAreNotWaitedFor() throws {
        var h = Harness()
        let (session, tokens) = try h.accept(accepted: ["a"])
        _ = h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["a"], now: h.start)
        #expect(
            h.receiver.uploadEnded(fileID: "a", outcome: .received, now: h.start)
                == LocalSendReceiver.Ended(session: session, outcomes: ["a": .received, "b": .declined]))
    }

    // MARK: cancel

    @Test func onlyTheSessionsPeerCancelsAndOnceAcceptedOnlyWithTheSessionID() throws {
        var h = Harness()
        let (session, _) = try h.accept()
        #expect(
            h.receiver.cancelReceived(from: Self.stranger, session: session)
                == .refuse(.forbidden, reason: "not this session's peer"))
        #expect(
            h.receiver.cancelReceived(from: Self.phone, session: nil)
                == .refuse(.forbidden, reason: "wrong or missing session ID"))
        #expect(h.receiver.cancelReceived(from: Self.phone, session: session) == .cancel(session: session))
        #expect(!h.receiver.isBusy)
        #expect(
            h.receiver.cancelReceived(from: Self.phone, session: session) == .refuse(.forbidden, reason: "no session"))
    }

    @Test func aCancelWhileWaitingForConsentNeedsNoSessionIDButTheRightPeer() throws {
        var h = Harness()
        let session = try h.prepare()
        #expect(
            h.receiver.cancelReceived(from: Self.stranger, session: nil)
                == .refuse(.forbidden, reason: "not this session's peer"))
        #expect(h.receiver.cancelReceived(from: Self.phone, session: nil) == .cancel(session: session))
    }

    // MARK: timeouts

    @Test func consentThatTakesTooLongExpiresAtTheDeadlineAndNotBefore() throws {
        var h = Harness()
        let session = try h.prepare()
        let deadline = h.start.advanced(by: h.receiver.limits.consentTimeout)
        #expect(h.receiver.nextDeadline == deadline)
        #expect(h.receiver.timerFired(now: deadline.advanced(by: .milliseconds(-1))) == nil)
        #expect(h.receiver.timerFired(now: deadline) == .consentExpired(session: session))
        #expect(!h.receiver.isBusy && h.receiver.nextDeadline == nil)
    }

    @Test func anAcceptedSessionWithoutUploadActivityIsAbandonedAndProgressKeepsItAlive() throws {
        var h = Harness()
        let (session, tokens) = try h.accept()
        _ = h.receiver.uploadReceived(from: Self.phone, session: session, fileID: "a", token: tokens["a"], now: h.start)
        let idle = h.receiver.limits.idleTimeout
        h.receiver.uploadProgressed(now: h.start.advanced(by: idle))
        #expect(h.receiver.timerFired(now: h.start.advanced(by: idle)) == nil)
        #expect(h.receiver.nextDeadline == h.start.advanced(by: idle * 2))
        #expect(h.receiver.timerFired(now: h.start.advanced(by: idle * 2)) == .sessionAbandoned(session: session))
        #expect(!h.receiver.isBusy)
    }

    // MARK: values

    @Test func secretsParseFromHexInEitherCaseAndCompareWhole() throws {
        var random = SplitMix64(seed: 1)
        let secret = LocalSendSecret.random(using: &random)
        #expect(LocalSendSecret(hex: secret.description) == secret)
        #expect(LocalSendSecret(hex: secret.description.uppercased())?.matches(secret) == true)
        #expect(LocalSendSecret(hex: String(secret.description.dropLast(2))) == nil)
        #expect(LocalSendSecret(hex: "zz" + secret.description.dropFirst(2)) == nil)
        #expect(secret.description.count == 32)
    }
}
