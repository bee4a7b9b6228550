import FerrySession
import FerryWire
import Testing

@testable import FerryCLI
@testable import FerryTransfer

/// Issue 28, 3: what a person reads about a transfer that stopped part way and about the send that resumes it; and
/// the review's items on a service's log (`stopping`, `accepted 2 of 3`).
@Suite struct InterruptionTextTests {
    static let mib: UInt64 = 1 << 20
    static let transferID = TransferID(bytes: [UInt8](repeating: 5, count: 16))!

    static func peer(_ name: String, id: UInt64) -> PeerInfo {
        PeerInfo(
            peerID: PeerID(rawValue: id), deviceID: DeviceID(bytes: [UInt8](repeating: UInt8(id), count: 32))!,
            displayName: name, mode: .server, address: nil, isDiscovered: true, isAcceptingConnections: true,
            state: .connected)
    }

    /// A 200 MiB file to r3 that stopped at 55 MiB, as the engine reports it.
    static func stopped(_ stop: TransferStop, failure: String, _ direction: TransferDirection = .sending)
        -> TransferOutcome
    {
        var outcome = TransferOutcome(
            transferID: transferID, peer: peer("r3", id: 3), direction: direction, filesSucceeded: 0, filesFailed: 1,
            filesSkipped: 0, bytes: 55 * mib, wireBytes: 55 * mib, chunkBytes: 55 * mib, resumedBytes: 0,
            duration: .seconds(5), failure: failure)
        outcome.acceptedBytes = 200 * mib
        outcome.keptBytes = 55 * mib
        outcome.stop = stop
        return outcome
    }

    static func summary(_ outcomes: [TransferOutcome]) -> TransferSummary {
        TransferSummary(files: 1, bytes: 200 * mib, seconds: 5, peers: outcomes.map(TransferSummary.PeerResult.init))
    }

    /// Issue 28, 3: "nothing sent to r3: the receiver cancelled (shutting down)" while 55 MiB were kept there.
    @Test func aSenderSaysTheReceiverShutDownAndKeepsWhatItVerified() {
        let outcome = Self.stopped(.cancelledByPeer(.shuttingDown), failure: "the receiver cancelled (shutting down)")
        #expect(
            Self.summary([outcome]).text
                == "stopped at r3: the receiver shut down at 55.0 MiB of 200 MiB; it keeps them, send again to resume\n"
        )
        let byUser = Self.stopped(
            .cancelledByPeer(.cancelledByUser), failure: "the receiver cancelled (cancelled by the user)")
        #expect(
            Self.summary([byUser]).text
                == "stopped at r3: the receiver was stopped by its user at 55.0 MiB of 200 MiB; it keeps them, send "
                + "again to resume\n")
        // The JSON summary says it too, with what resumes next time.
        #expect(
            Self.summary([outcome]).jsonLine.text.contains(
                #""failure":"the receiver cancelled (shutting down)","keptBytes":57671680}"#))
    }

    /// A lost link: no cancel came, so the sender cannot know what the receiver kept; it says what a ferry receiver
    /// does, not that this one did.
    @Test func aLostLinkSaysWhatAFerryReceiverKeepsWithoutClaimingIt() {
        let lost = Self.stopped(.linkLost, failure: "the link was lost (connection reset)")
        #expect(
            Self.summary([lost]).text
                == "stopped at r3: the link was lost (connection reset) at 55.0 MiB of 200 MiB; a ferry receiver keeps "
                + "what it verified, send again to resume\n")
    }

    /// Stopped here (this side's protocol error, Ctrl-C) or with nothing verified: the failure as it was.
    @Test func nothingKeptOrStoppedHereIsAPlainFailure() {
        var nothing = Self.stopped(.cancelledByPeer(.shuttingDown), failure: "the receiver cancelled (shutting down)")
        nothing.keptBytes = 0
        nothing.bytes = 0
        #expect(Self.summary([nothing]).text == "nothing sent to r3: the receiver cancelled (shutting down)\n")
        let here = Self.stopped(.cancelledHere(.protocolError), failure: "it broke the transfer protocol (x)")
        #expect(Self.summary([here]).text == "nothing sent to r3: it broke the transfer protocol (x)\n")
    }

    /// `--to` several or `--all`: each peer's line says it, and the headline no longer says "nothing sent".
    @Test func eachPeerOfABroadcastSaysWhatItKeeps() {
        let stopped = Self.stopped(.cancelledByPeer(.shuttingDown), failure: "the receiver cancelled (shutting down)")
        var other = Self.stopped(.linkLost, failure: "the link was lost (reset)")
        other.peer = Self.peer("r4", id: 4)
        #expect(
            Self.summary([stopped, other]).text == """
                no file arrived whole at 2 peers:
                  r3: stopped: the receiver shut down at 55.0 MiB of 200 MiB; it keeps them, send again to resume
                  r4: stopped: the link was lost (reset) at 55.0 MiB of 200 MiB; a ferry receiver keeps what it verified, send again to resume

                """)
        // One peer got everything: the other's line says what it keeps, of the unfinished files only.
        var ok = Self.stopped(.cancelledByPeer(.shuttingDown), failure: "")
        ok.failure = nil
        ok.stop = nil
        ok.keptBytes = 0
        ok.filesSucceeded = 1
        ok.filesFailed = 0
        ok.bytes = 200 * Self.mib
        ok.peer = Self.peer("r5", id: 5)
        var partial = stopped
        partial.filesSucceeded = 1
        partial.bytes = 75 * Self.mib
        let text = TransferSummary(
            files: 2, bytes: 200 * Self.mib, seconds: 5, peers: [ok, partial].map(TransferSummary.PeerResult.init)
        ).text
        #expect(
            text.hasSuffix(
                "  r5: ok\n  r3: stopped after 1 of 2 files: the receiver shut down at 75.0 MiB of 200 MiB; it keeps "
                    + "the 55.0 MiB of the unfinished files, send again to resume\n"), "\(text)")
    }

    /// The receiver's own line when SIGTERM (or Ctrl-C, or the sender) stopped it: what it keeps staged.
    @Test func aReceiverSaysWhatItKeepsStaged() {
        let stderr = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false)
        var outcome = Self.stopped(.cancelledHere(.shuttingDown), failure: "shutting down", .receiving)
        outcome.peer = Self.peer("alice", id: 1)
        reporter.report(.finished(outcome))
        #expect(
            stderr.text
                == "transfer from alice stopped (shutting down) at 55.0 MiB of 200 MiB; kept staged for a resume when "
                + "alice sends again\n")
        let json = TransferReporter.jsonLine(for: .finished(outcome)).text
        // keptBytes follows the keys before it, whatever keys are appended after it.
        #expect(json.contains(#""servedBytes":0,"keptBytes":57671680"#), "\(json)")
        #expect(json.hasSuffix("}"), "\(json)")
    }

    /// Review: a receiver that ended a transfer for another cause (a peer that broke the protocol, a failed read)
    /// said it kept the data "for a resume when alice sends again": only a cancel either way, a lost link, Ctrl-C or
    /// SIGTERM leave staged data meant for a resume.
    @Test func aReceiverSaysItKeepsDataOnlyAfterAStopMeantForAResume() {
        let keeps: [TransferStop] = [
            .cancelledByPeer(.cancelledByUser), .cancelledByPeer(.shuttingDown), .linkLost,
            .cancelledHere(.cancelledByUser), .cancelledHere(.shuttingDown),
        ]
        for stop in keeps {
            let outcome = Self.stopped(stop, failure: "stopped", .receiving)
            #expect(InterruptionText.receiving(outcome) != nil, "\(stop)")
        }
        for stop in [
            TransferStop.cancelledHere(.protocolError), .cancelledHere(.readFailed), .cancelledHere(.diskFull),
        ] {
            let outcome = Self.stopped(stop, failure: "it broke the transfer protocol", .receiving)
            #expect(InterruptionText.receiving(outcome) == nil, "\(stop)")
            #expect(
                TransferReporter.endText(outcome, failure: "it broke the transfer protocol")
                    == "transfer from r3 failed: it broke the transfer protocol", "\(stop)")
        }
    }

    /// Review (issue 28, 4): a sender that ended its last transfer for another cause than Ctrl-C or SIGTERM (a read
    /// that failed, a receiver that broke the protocol) gets a summary that says so: its line is not said twice.
    @Test func aSendStoppedHereForAnotherCauseLeavesItsFailureToTheSummary() {
        let started = TransferEvent.started(
            transferID: Self.transferID, peer: Self.peer("r3", id: 3), direction: .sending,
            files: [Self.file("big.bin")], accepted: [true], resumeOffsets: [0])
        for reason in [CancelReason.readFailed, .protocolError] {
            let stderr = CapturingTextSink()
            let reporter = TransferReporter(
                context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false,
                summaryFollows: true)
            reporter.report(started)
            reporter.report(.finished(Self.stopped(.cancelledHere(reason), failure: "could not read big.bin")))
            #expect(stderr.text.isEmpty, "\(reason): \(stderr.text)")
        }
    }

    /// `send` prints a summary: its last transfer's failure is said there, once. `watch` has none: it says it.
    @Test func theLastSendsEndIsSaidOnceWhenASummaryFollows() {
        let outcome = Self.stopped(.cancelledByPeer(.shuttingDown), failure: "the receiver cancelled (shutting down)")
        let started = TransferEvent.started(
            transferID: Self.transferID, peer: outcome.peer, direction: .sending, files: [Self.file("big.bin")],
            accepted: [true], resumeOffsets: [0])
        for summaryFollows in [true, false] {
            let stderr = CapturingTextSink()
            let reporter = TransferReporter(
                context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false,
                summaryFollows: summaryFollows)
            reporter.report(started)
            reporter.report(.finished(outcome))
            let line =
                "transfer to r3 stopped: the receiver shut down at 55.0 MiB of 200 MiB; it keeps them, send again to "
                + "resume\n"
            #expect(stderr.text == (summaryFollows ? "" : line))
        }
        // Ctrl-C here: no summary follows, the line is the last word.
        let stderr = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false,
            summaryFollows: true)
        reporter.report(started)
        reporter.report(.finished(Self.stopped(.cancelledHere(.cancelledByUser), failure: "cancelled by the user")))
        #expect(
            stderr.text
                == "transfer to r3 stopped: cancelled by the user at 55.0 MiB of 200 MiB; a ferry receiver keeps what "
                + "it verified, send again to resume\n")
    }

    static func file(_ name: String, size: UInt64 = 200 << 20) -> OfferedFile {
        OfferedFile(
            path: name, size: size, permissions: 0o644, modificationTime: FileTime(seconds: 0, nanoseconds: 0),
            mediaType: "", pixelWidth: 0, pixelHeight: 0)
    }

    /// Issue 28, 3: the re-send did not mention resuming. On both sides, when it starts and when the file ends.
    @Test func aResumedSendSaysSo() {
        for direction in [TransferDirection.sending, .receiving] {
            let stderr = CapturingTextSink()
            let reporter = TransferReporter(
                context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false)
            reporter.report(
                .started(
                    transferID: Self.transferID, peer: Self.peer("r3", id: 3), direction: direction,
                    files: [Self.file("photo.jpg"), Self.file("new.jpg"), Self.file("whole.jpg")],
                    accepted: [true, true, true], resumeOffsets: [55 * Self.mib, 0, 200 * Self.mib]))
            #expect(
                stderr.text
                    == (direction == .sending
                        ? "resuming photo.jpg at 55.0 MiB of 200 MiB: r3 kept them from an earlier send\n"
                        : "resuming photo.jpg from r3 at 55.0 MiB of 200 MiB: kept staged here from an earlier "
                            + "transfer\n"))
        }
        let five = InterruptionText.resuming(
            files: (0..<5).map { Self.file("\($0).bin", size: 10 * Self.mib) },
            accepted: Array(repeating: true, count: 5),
            resumeOffsets: Array(repeating: 2 * Self.mib, count: 5), direction: .sending, peer: "r3")
        #expect(five == ["resuming 5 files at 10.0 MiB of 50.0 MiB: r3 kept them from an earlier send"])
        var file = FileOutcome(
            transferID: Self.transferID, peer: Self.peer("r3", id: 3), direction: .sending, fileIndex: 0,
            fileName: "photo.jpg", size: 200 * Self.mib, publishedName: "photo.jpg", failure: nil,
            resumedBytes: 55 * Self.mib)
        #expect(
            TransferReporter.text(for: file) == "sent photo.jpg to r3 (200 MiB; 55.0 MiB of it resumed, not sent again)"
        )
        file.direction = .receiving
        #expect(
            TransferReporter.text(for: file)
                == "received photo.jpg from r3 (200 MiB; 55.0 MiB of it resumed, not sent again)")
        var resumed = Self.stopped(.linkLost, failure: "")
        resumed.failure = nil
        resumed.stop = nil
        resumed.keptBytes = 0
        resumed.filesSucceeded = 1
        resumed.filesFailed = 0
        resumed.bytes = 145 * Self.mib
        resumed.resumedBytes = 55 * Self.mib
        #expect(
            Self.summary([resumed]).text
                == "sent 1 file (200 MiB) to 1 peer in 5.0 s (29.0 MiB/s, 55.0 MiB resumed, not sent again)\n  r3: ok\n"
        )
        #expect(Self.summary([resumed]).jsonLine.text.contains(#""failure":null,"resumedBytes":57671680}"#))
    }

    /// Review: a service logged `alice offers 3 files (12 MiB): accepted` whatever it took of them.
    @Test func anOfferTakenInPartSaysHowMuch() {
        #expect(TransferReporter.acceptedText([true, true, true]) == "accepted")
        let stderr = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: CapturingTextSink(), stderr: stderr), json: false, bars: false,
            logsAcceptedOffers: true)
        reporter.report(
            .started(
                transferID: Self.transferID, peer: Self.peer("alice", id: 1), direction: .receiving,
                files: [Self.file("a", size: 4 << 20), Self.file("b", size: 4 << 20), Self.file("c", size: 4 << 20)],
                accepted: [true, false, true], resumeOffsets: [0, 0, 0]))
        #expect(stderr.text == "alice offers 3 files (12.0 MiB): accepted 2 of 3\n")
    }

    /// Review: `stopping: SIGTERM` was a plain line under --json; there it is an event on stdout, and nothing is
    /// written to stderr.
    @Test func stoppingIsAnEventUnderJSON() {
        let stdout = CapturingTextSink()
        let stderr = CapturingTextSink()
        TransferReporter(context: CommandContext(stdout: stdout, stderr: stderr), json: true, bars: false)
            .stopping(signal: "SIGTERM")
        #expect(stdout.text == #"{"event":"stopping","signal":"SIGTERM"}"# + "\n")
        #expect(stderr.text.isEmpty)
        let text = CapturingTextSink()
        TransferReporter(context: CommandContext(stdout: stdout, stderr: text), json: false, bars: false)
            .stopping(signal: "SIGTERM")
        #expect(text.text == "stopping: SIGTERM\n")
    }
}
