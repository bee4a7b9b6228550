@testable import FerryTransfer
import Synchronization
import FerrySession
import FerryWire
import Testing

@testable import FerryCLI

/// The summary of `ferry send`, in text and JSON; the offer prompt; the picker's input.
@Suite struct TransferSummaryTests {
    static let mixed = TransferSummary(
        files: 2, bytes: 3 << 20, seconds: 1.5,
        peers: [
            .init(
                name: "alice", peerID: "0123456789abcdef", filesSucceeded: 2, bytes: 3 << 20, wireBytes: 1 << 20),
            .init(name: "bob\u{1B}[2J", peerID: nil, failure: "could not reach peer: connection refused"),
        ])

    @Test func text() {
        #expect(
            Self.mixed.text == """
                sent 2 files (3.0 MiB) to 1 of 2 peers in 1.5 s (2.0 MiB/s, compression 3.00x)
                  alice: ok
                  bob\\u{1B}[2J: failed: could not reach peer: connection refused

                """)
        #expect(!Self.mixed.isSuccess)
        let one = TransferSummary(
            files: 1, bytes: 10, seconds: 0,
            peers: [.init(name: "alice", peerID: "01", filesSucceeded: 1, bytes: 10, wireBytes: 10)])
        #expect(one.isSuccess)
        #expect(one.text == "sent 1 file (10 B) to 1 peer in under 0.1 s\n  alice: ok\n")
        #expect(!TransferSummary(files: 1, bytes: 10, seconds: 0, peers: []).isSuccess)
    }

    /// Issue 9, 6: a denial read "sent 1 file ... to 0 of 1 peer (-- B/s)".
    @Test func aDenialSaysThatNothingWasSentAndWhy() {
        let denied = TransferSummary(
            files: 1, bytes: 10, seconds: 0,
            peers: [
                .init(
                    name: "bob", peerID: "01", filesSkipped: 1, failure: "the offer was denied (denied by the user)",
                    deniedReason: "denied by the user")
            ])
        #expect(denied.text == "nothing sent: bob denied the offer (denied by the user)\n")
        #expect(!denied.isSuccess)
        let unreachable = TransferSummary(
            files: 1, bytes: 10, seconds: 0, peers: [.init(name: "bob", peerID: nil, failure: "connection refused")])
        #expect(unreachable.text == "nothing sent to bob: connection refused\n")
        // A failure that names the peer already is not prefixed with its name again.
        let named = TransferSummary(
            files: 1, bytes: 10, seconds: 0,
            peers: [.init(name: "10.0.0.2:4000", peerID: nil, failure: "could not reach 10.0.0.2:4000: refused")])
        #expect(named.text == "nothing sent: could not reach 10.0.0.2:4000: refused\n")
        // Only that: a peer whose name appears in another failure is still named.
        let short = TransferSummary(
            files: 1, bytes: 10, seconds: 0, peers: [.init(name: "a", peerID: nil, failure: "the link was lost")])
        #expect(short.text == "nothing sent to a: the link was lost\n")
        let two = TransferSummary(
            files: 2, bytes: 10, seconds: 0,
            peers: [
                .init(name: "alice", peerID: "01", filesSkipped: 2, failure: "x", deniedReason: "busy\u{1B}[2J"),
                .init(name: "bob", peerID: nil, failure: "connection refused"),
            ])
        #expect(
            two.text == """
                nothing sent to 2 peers:
                  alice: denied the offer (busy\\u{1B}[2J)
                  bob: failed: connection refused

                """)
        #expect(
            TransferSummary(files: 1, bytes: 10, seconds: 0, peers: []).text == "nothing sent: no peer was reached\n")
    }

    /// A peer that got some files before it failed is not counted as "nothing sent".
    @Test func aPeerThatFailedAfterSomeFilesSaysHowMany() {
        let partial = TransferSummary(
            files: 3, bytes: 3 << 20, seconds: 2,
            peers: [
                .init(
                    name: "bob", peerID: "01", filesSucceeded: 2, filesFailed: 1, bytes: 2 << 20, wireBytes: 2 << 20,
                    failure: "the link was lost (timeout)")
            ])
        #expect(
            partial.text == """
                sent 3 files (3.0 MiB) to 0 of 1 peer in 2.0 s (1.0 MiB/s)
                  bob: failed after 2 of 3 files: the link was lost (timeout)

                """)
    }

    /// Issue 9, 6: after a 40 s run in which one peer's link died, the summary said 0.5 s and 154 MiB/s (the time
    /// of the successful peer only, and the bytes of both).
    @Test func theTimeRunsUntilTheLastPeerEndedFailedOnesIncluded() {
        func outcome(_ name: String, seconds: Double, bytes: UInt64, failure: String?, denied: String? = nil)
            -> TransferOutcome
        {
            TransferOutcome(
                transferID: TransferID(bytes: Array(repeating: 1, count: 16))!,
                peer: PairingTextTests.peer(trusted: true, code: nil), direction: .sending,
                filesSucceeded: failure == nil ? 1 : 0, filesFailed: failure == nil ? 0 : 1, filesSkipped: 0,
                bytes: bytes, wireBytes: bytes, chunkBytes: bytes, resumedBytes: 0,
                duration: .milliseconds(Int64(seconds * 1000)), failure: failure, deniedReason: denied)
        }
        let ok = outcome("alice", seconds: 0.5, bytes: 40 << 20, failure: nil)
        let died = outcome("bob", seconds: 40, bytes: 37 << 20, failure: "the link was lost (timeout)")
        let denied = outcome("carol", seconds: 300, bytes: 0, failure: "the offer was denied (x)", denied: "x")
        #expect(TransferSummary.transferTime([ok, died, denied]) == .seconds(40))
        #expect(TransferSummary.transferTime([denied]) == nil)
        let summary = TransferSummary(
            files: 1, bytes: 40 << 20, seconds: 40, peers: [ok, died].map(TransferSummary.PeerResult.init))
        #expect(summary.sentBytes == 77 << 20)
        #expect(summary.text.hasPrefix("sent 1 file (40.0 MiB) to 1 of 2 peers in 40.0 s (1.9 MiB/s)\n"))
    }

    /// Issue 9, 6: "compression 0.97x" for JPEGs. The ratio is shown only where compression paid.
    @Test func compressionIsMentionedOnlyWhereItPaid() {
        func summary(raw: UInt64, wire: UInt64) -> String {
            TransferSummary(
                files: 1, bytes: raw, seconds: 1,
                peers: [
                    .init(
                        name: "alice", peerID: "01", filesSucceeded: 1, bytes: raw, wireBytes: wire, chunkBytes: raw)
                ]
            ).text
        }
        #expect(
            summary(raw: 1 << 20, wire: 1 << 20).hasPrefix("sent 1 file (1.0 MiB) to 1 peer in 1.0 s (1.0 MiB/s)\n"))
        // Re-sent raw chunks: more on the wire than the file holds; not "compression 0.97x".
        #expect(!summary(raw: 1 << 20, wire: 1_080_000).contains("compression"))
        #expect(!summary(raw: 1 << 20, wire: 1_030_000).contains("compression"))
        #expect(summary(raw: 3 << 20, wire: 1 << 20).contains("(3.0 MiB/s, compression 3.00x)\n"))
        // The ratio compares the chunks' raw bytes with their wire bytes, re-sent ones on both sides.
        let resent = TransferSummary.PeerResult(
            name: "a", peerID: nil, filesSucceeded: 1, bytes: 1 << 20, wireBytes: 1 << 20, chunkBytes: 2 << 20)
        #expect(TransferSummary(files: 1, bytes: 1 << 20, seconds: 1, peers: [resent]).compressionRatio == 2)
    }

    @Test func json() {
        #expect(
            Self.mixed.jsonLine.text
                == #"{"event":"summary","ok":false,"files":2,"bytes":3145728,"sentBytes":3145728,"wireBytes":1048576,"#
                + #""seconds":1.5,"throughput":2097152.0,"compressionRatio":3.0,"peers":[{"peer":"alice","#
                + #""peerID":"0123456789abcdef","ok":true,"filesSucceeded":2,"filesFailed":0,"filesSkipped":0,"#
                + #""bytes":3145728,"wireBytes":1048576,"failure":null},{"peer":"bob\u001b[2J","peerID":null,"#
                + #""ok":false,"filesSucceeded":0,"filesFailed":0,"filesSkipped":0,"bytes":0,"wireBytes":0,"#
                + #""failure":"could not reach peer: connection refused"}],"chunkBytes":3145728,"relayedBytes":0,"#
                + #""messages":0}"#)
    }

    @Test func offerPrompt() {
        let time = FileTime(seconds: 0)
        let files = [
            OfferedFile(
                path: "photo.jpg", size: 2 << 20, modificationTime: time, mediaType: "image/jpeg", pixelWidth: 4032,
                pixelHeight: 3024),
            OfferedFile(path: "notes\u{1B}]0;x\u{7}.txt", size: 120, modificationTime: time),
            OfferedFile(path: "odd.png", size: 1, modificationTime: time, pixelWidth: 5, pixelHeight: 0),
        ]
        #expect(
            OfferPrompt.text(sender: "alice\u{202E}", files: files, totalBytes: (2 << 20) + 121) == [
                "alice\\u{202E} offers 3 files (2.0 MiB):",
                "  photo.jpg  2.0 MiB  4032x3024",
                "  notes\\u{1B}]0;x\\u{7}.txt  120 B",
                "  odd.png  1 B",
                "Accept? [y/N]",
            ])
        let many = (1...12).map { OfferedFile(path: "f\($0)", size: 1, modificationTime: time) }
        let lines = OfferPrompt.text(sender: "bob", files: many, totalBytes: 12)
        #expect(lines.first == "bob offers 12 files (12 B):")
        #expect(lines.count == 13)
        #expect(lines[11] == "  ... and 2 more")
        #expect(OfferPrompt.text(sender: "bob", files: [many[0]], totalBytes: 1).first == "bob offers 1 file (1 B):")
    }

    @Test func yesAndNo() {
        for yes in ["y", "Y", "yes", " YES ", "y\r"] {
            #expect(OfferPrompt.isYes(yes), "\(yes)")
        }
        for no in ["", "n", "no", "yep", "sure", "y y"] {
            #expect(!OfferPrompt.isYes(no), "\(no)")
        }
    }
}

@Suite("Pairing in prompts and output")
struct PairingTextTests {
    static func peer(trusted: Bool, code: String?) -> PeerInfo {
        PeerInfo(
            peerID: PeerID(rawValue: 7), deviceID: DeviceID(bytes: Array(repeating: 0, count: 32))!,
            displayName: "bob\u{1B}[2J", mode: .peer, address: nil, isDiscovered: false, isAcceptingConnections: true,
            state: .connected, pairingCode: code, isTrusted: trusted)
    }

    @Test func answersYesNoAlways() {
        #expect(OfferPrompt.answer(" Y ") == .accept)
        #expect(OfferPrompt.answer("yes") == .accept)
        #expect(OfferPrompt.answer("a") == .always)
        #expect(OfferPrompt.answer("ALWAYS") == .always)
        for other in ["", "n", "no", "al", "yess", "always!"] {
            #expect(OfferPrompt.answer(other) == .deny, "\(other)")
        }
    }

    @Test func untrustedPeerShowsItsCodeAndOffersAlways() {
        let lines = OfferPrompt.pairingLines(Self.peer(trusted: false, code: "012345"))
        #expect(
            lines == [
                "From device AAAA-AAAA; pairing code 012 345: the sender shows the same code unless someone is in between.",
                "Accept? [y]es, [n]o, [a]lways (trust bob\\u{1B}[2J from now on)",
            ])
    }

    /// Issue 28, 7: trust is one-way. A sender this receiver pinned may not have pinned the receiver, and then asks
    /// its person whether the receiver shows the code: the receiver's screen gives it all the same.
    @Test func trustedPeerSaysSoAndStillShowsTheCodeItMayBeAskedAbout() {
        let lines = OfferPrompt.pairingLines(Self.peer(trusted: true, code: "012345"))
        #expect(
            lines == [
                "From bob\\u{1B}[2J, trusted (device AAAA-AAAA, key verified); pairing code 012 345, if"
                    + " bob\\u{1B}[2J asks to compare it.",
                "Accept? [y/N]",
            ])
    }

    @Test func senderPrintsTheSameCode() {
        #expect(
            TransferReporter.pairingLine(Self.peer(trusted: false, code: "987654"))
                == "bob\\u{1B}[2J (AAAA-AAAA): pairing code 987 654 - the receiver shows the same code unless someone is in between"
        )
        #expect(
            TransferReporter.pairingLine(Self.peer(trusted: true, code: "987654"))
                == "bob\\u{1B}[2J (AAAA-AAAA): trusted, key verified; pairing code 987 654, if bob\\u{1B}[2J asks to"
                + " compare it")
    }

    /// On a terminal the sender asks "Does bob show 987 654?" right after this line: it gives the code only, and
    /// does not claim what the receiver shows (the question asks it).
    @Test func senderThatAsksNextGivesOnlyTheCode() {
        let peer = Self.peer(trusted: false, code: "987654")
        let line = TransferReporter.pairingLine(peer, confirming: true)
        #expect(line == "bob\\u{1B}[2J (AAAA-AAAA): connected, pairing code 987 654")
        #expect(PairingConfirmation.question(peer).hasPrefix("Does bob\\u{1B}[2J show 987 654? "))
        #expect(
            TransferReporter.pairingLine(Self.peer(trusted: true, code: "987654"), confirming: true)
                == "bob\\u{1B}[2J (AAAA-AAAA): trusted, key verified; pairing code 987 654, if bob\\u{1B}[2J asks"
                + " to compare it")
    }
}

@Suite("Offer prompt answers")
struct OfferPromptAnswerTests {
    static func offer() -> IncomingOffer {
        IncomingOffer(
            transferID: TransferID(bytes: Array(repeating: 1, count: 16))!,
            peer: PairingTextTests.peer(trusted: false, code: "123456"),
            files: [], totalBytes: 0, deadline: .now + .seconds(600))
    }

    /// Feeds one offer and one typed line; returns what the prompt answered.
    static func answers(
        typing line: String, minimumAnswerDelay: Duration, offer: IncomingOffer = offer()
    ) async -> [OfferPrompt.Answer] {
        let (updates, feed) = AsyncStream.makeStream(of: OfferPrompt.Update.self)
        let (lines, typing) = AsyncStream.makeStream(of: String.self)
        let answered = Mutex<[OfferPrompt.Answer]>([])
        let prompt = OfferPrompt(show: { _ in }, minimumAnswerDelay: minimumAnswerDelay)
        let running = Task {
            await prompt.run(updates: updates, lines: lines) { _, answer in
                answered.withLock { $0.append(answer) }
                feed.finish()
            }
        }
        feed.yield(.offer(offer))
        typing.yield(line)
        typing.finish()  // end of input: an unanswered offer is denied
        await running.value
        return answered.withLock { $0 }
    }

    @Test func anAnswerIsTakenOnceThePromptHasBeenOnScreen() async {
        #expect(await Self.answers(typing: "a", minimumAnswerDelay: .zero) == [.always])
    }

    /// Trusting from now on means the person compared a code: a sender whose link has none is accepted this once.
    @Test func alwaysForASenderWithNoPairingCodeAcceptsWithoutTrusting() async {
        let uncoded = IncomingOffer(
            transferID: TransferID(bytes: Array(repeating: 1, count: 16))!,
            peer: PairingTextTests.peer(trusted: false, code: nil), files: [], totalBytes: 0,
            deadline: .now + .seconds(600))
        #expect(await Self.answers(typing: "a", minimumAnswerDelay: .zero, offer: uncoded) == [.accept])
    }

    /// A sender's question for a receiver with no code offers no [a]lways; with a code it does.
    @Test func theQuestionForAPeerWithNoCodeOffersNoTrust() {
        let uncoded = PairingConfirmation.question(PairingTextTests.peer(trusted: false, code: nil))
        #expect(!uncoded.contains("[a]lways") && uncoded.contains("without trusting it"))
        #expect(PairingConfirmation.question(PairingTextTests.peer(trusted: false, code: "123456")).contains("[a]lways"))
    }

    /// `trust add FVQN-OCPD` pins the peer found only when its key begins with that short ID: a display name may be
    /// anything, another peer's short ID included.
    @Test func aShortIDStandsForTheKeyNotForTheName() throws {
        let id = try #require(DeviceID(bytes: Array(repeating: 0, count: 32)))
        let short = id.shortDescription
        #expect(TrustCommand.Add.answersTo(short, deviceID: id))
        #expect(!TrustCommand.Add.answersTo("ZZZZ-ZZZZ", deviceID: id))
        #expect(TrustCommand.Add.answersTo("alice", deviceID: id))
    }

    @Test func anAnswerTypedBeforeThePromptCouldBeReadIsIgnored() async {
        #expect(await Self.answers(typing: "a", minimumAnswerDelay: .seconds(3600)) == [.deny])
    }
}
