import FerryStateMachines
import Testing

/// The sender's reading of a LocalSend receiver's answers to `prepare-upload` (docs/LOCALSEND.md, "Sending").
@Suite struct LocalSendSenderSessionTests {
    @Test func tokensMeanUploadThoseFilesAndNoTokensMeanNothingToUpload() {
        var session = LocalSendSenderSession()
        #expect(
            session.answered(.accepted(sessionID: "s", fileIDs: ["0", "2"]))
                == .upload(sessionID: "s", fileIDs: ["0", "2"]))
        var other = LocalSendSenderSession()
        #expect(other.answered(.accepted(sessionID: "s", fileIDs: [])) == .nothingToUpload)
        #expect(other.answered(.nothingWanted) == .nothingToUpload)
    }

    @Test func aPinIsAskedThenAskedAgainAsWrongAndTheThirdRefusalStops() {
        var session = LocalSendSenderSession()
        #expect(session.answered(.status(401)) == .askPin(wrong: false))
        #expect(session.pin("1111") == .repeatRequest(pin: "1111"))
        #expect(session.answered(.status(401)) == .askPin(wrong: true))
        #expect(session.pin("2222") == .repeatRequest(pin: "2222"))
        #expect(session.answered(.status(401)) == .askPin(wrong: true))
        #expect(session.pin("3333") == .repeatRequest(pin: "3333"))
        #expect(session.answered(.status(401)) == .stop(.pinRefused(attempts: 3)))
        #expect(session.pinAttempts == LocalSendSenderSession.maxPinAttempts)
    }

    @Test func noPinToGiveStopsAsRequiredFirstAndAsRefusedAfterAWrongOne() {
        var session = LocalSendSenderSession()
        #expect(session.answered(.status(401)) == .askPin(wrong: false))
        #expect(session.noPin() == .stop(.pinRequired))
        var wrong = LocalSendSenderSession()
        _ = wrong.answered(.status(401))
        _ = wrong.pin("0000")
        #expect(wrong.answered(.status(401)) == .askPin(wrong: true))
        #expect(wrong.noPin() == .stop(.pinRefused(attempts: 1)))
    }

    @Test func tooManyAttemptsDeclinedBusyAndOtherStatusesStopWithoutRetrying() {
        for (status, stop) in [
            (429, LocalSendSenderSession.Stop.pinBlocked), (403, .declined), (409, .busy),
            (500, .rejected(status: 500)), (400, .rejected(status: 400)),
        ] {
            var session = LocalSendSenderSession()
            #expect(session.answered(.status(status)) == .stop(stop))
            #expect(session.pinAttempts == 0)
        }
    }
}
