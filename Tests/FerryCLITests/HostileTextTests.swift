import FerryWire
import Foundation
import Synchronization
import Testing

@testable import FerryCLI
@testable import FerrySession
@testable import FerryTransfer

/// No peer-controlled byte reaches the terminal unescaped (promise 7): a display name, a file name, a denial
/// detail and a cancel detail that try to set the window title, erase the line, return the carriage to forge a
/// line, start a new line, and reverse the text, go through the real formatting code of every place they show
/// up in `send`, `receive` and `watch`; the output holds none of those characters raw.
@Suite struct HostileTextTests {
    /// OSC title, BEL, erase line, CR, LF, right-to-left override, C1 CSI.
    static let hostile = "evil\u{1B}]0;owned\u{07}\u{1B}[2K\rFORGED\nline\u{202E}gpj.exe\u{9B}31m"

    static let peer = PeerInfo(
        peerID: PeerID(rawValue: 0x1234), deviceID: DeviceID(bytes: [UInt8](repeating: 7, count: 32))!,
        displayName: hostile, mode: .peer, address: nil, isDiscovered: true, isAcceptingConnections: true,
        state: .connected)
    static let transferID = TransferID(bytes: [UInt8](repeating: 3, count: 16))!
    static let file = OfferedFile(
        path: "dir/" + hostile, size: 10, modificationTime: FileTime(seconds: 0, nanoseconds: 0))

    /// Fails unless `text` is inert: no control or bidi character but the line feeds that end lines (and, with
    /// `board`, the bars' own "ESC [ n F ESC [ J"), and no line that starts with the forged text.
    static func expectInert(
        _ text: String, board: Bool = false, _ where_: String, location: SourceLocation = #_sourceLocation
    ) {
        var rest = text
        if board {
            rest = rest.replacingOccurrences(
                of: "\u{1B}\\[[0-9]+F\u{1B}\\[J", with: "", options: .regularExpression)
        }
        let raw = rest.unicodeScalars.filter { $0 != "\n" && TerminalText.needsEscape($0) }
        #expect(
            raw.isEmpty, "\(where_): raw \(raw.map { String($0.value, radix: 16) }) in \(text.debugDescription)",
            sourceLocation: location)
        #expect(
            !rest.split(separator: "\n").contains { $0.hasPrefix("FORGED") || $0.hasPrefix("line") },
            "\(where_): a forged line in \(text.debugDescription)", sourceLocation: location)
        #expect(text.contains("\\u{1B}]0;owned"), "\(where_): the name is shown, escaped", sourceLocation: location)
    }

    static func outcome(_ direction: TransferDirection, failure: String?) -> FileOutcome {
        FileOutcome(
            transferID: transferID, peer: peer, direction: direction, fileIndex: 0, fileName: file.path, size: 10,
            publishedName: failure == nil ? file.path : nil, failure: failure, resumedBytes: 0)
    }

    static func finished(_ direction: TransferDirection) -> TransferOutcome {
        TransferOutcome(
            transferID: transferID, peer: peer, direction: direction, filesSucceeded: 0, filesFailed: 1,
            filesSkipped: 0, bytes: 0, wireBytes: 0, chunkBytes: 0, resumedBytes: 0, duration: .seconds(1),
            failure: "the sender cancelled (protocolError: " + hostile + ")")
    }

    /// A receiver's transfer in a broadcast swarm: its line names the sender.
    static var swarmFinished: TransferOutcome {
        var outcome = finished(.receiving)
        outcome.relayedBytes = 5
        outcome.servedBytes = 5
        return outcome
    }

    /// Every event a transfer can report, each carrying the hostile text.
    static var events: [TransferEvent] {
        let progress = TransferProgress(
            transferID: transferID, peer: peer, direction: .receiving, fileIndex: 0, fileName: file.path,
            fileBytesDone: 5, fileSize: 10, bytesDone: 5, totalBytes: 10, filesDone: 0, fileCount: 1, rate: 100,
            secondsLeft: 1)
        return [
            .offerReceived(
                IncomingOffer(transferID: transferID, peer: peer, files: [file], totalBytes: 10, deadline: .now)),
            .started(
                transferID: transferID, peer: peer, direction: .receiving, files: [file], accepted: [true],
                resumeOffsets: [0]),
            .progress(progress),
            .denied(transferID: transferID, peer: peer, direction: .sending, reason: "deniedByUser: " + hostile),
            .denied(transferID: transferID, peer: peer, direction: .receiving, reason: "invalidOffer: " + hostile),
            .fileFinished(outcome(.receiving, failure: nil)),
            .fileFinished(outcome(.sending, failure: nil)),
            .fileFinished(outcome(.receiving, failure: "writeFailed: " + hostile)),
            .fileFinished(outcome(.sending, failure: "hashMismatch: " + hostile)),
            .finished(finished(.sending)),
            .finished(finished(.receiving)),
            .finished(swarmFinished),
            .relayerCutOff(
                RelayerReport(
                    transferID: transferID, direction: .receiving, offender: hostile, reporter: nil,
                    reason: "a chunk " + hostile, fileIndex: 0, chunkIndex: 1)),
            .relayerCutOff(
                RelayerReport(
                    transferID: transferID, direction: .sending, offender: hostile, reporter: hostile,
                    reason: "a chunk " + hostile, fileIndex: 0, chunkIndex: 1)),
        ]
    }

    @Test(arguments: [false, true]) func reporterTextWithAndWithoutBars(bars: Bool) {
        let stderr = CapturingTextSink()
        let stdout = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: stdout, stderr: stderr, isStderrTerminal: bars), json: false, bars: bars)
        for event in Self.events {
            reporter.report(event)
        }
        reporter.connected(Self.peer)
        reporter.failure("could not reach " + Self.hostile)
        reporter.board?.clear()
        Self.expectInert(stderr.text, board: bars, "text output, bars \(bars)")
        #expect(stdout.text.isEmpty)
    }

    @Test func reporterJSONLinesAreEscaped() throws {
        let stdout = CapturingTextSink()
        let reporter = TransferReporter(
            context: CommandContext(stdout: stdout, stderr: CapturingTextSink()), json: true, bars: false)
        for event in Self.events {
            reporter.report(event)
        }
        reporter.connected(Self.peer)
        reporter.failure("could not reach " + Self.hostile, peer: Self.peer)
        let lines = stdout.text.split(separator: "\n")
        #expect(lines.count == Self.events.count + 2)
        for line in lines {
            #expect(!line.unicodeScalars.contains { TerminalText.needsEscape($0) }, "\(line.debugDescription)")
            // Still valid JSON that gives the peer's exact text back to a program.
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect((object["peer"] as? String).map { $0 == Self.hostile } ?? true)
        }
    }

    @Test func offerPromptAndItsEnd() async {
        Self.expectInert(
            OfferPrompt.text(
                for: Self.events.compactMap {
                    if case .offerReceived(let offer) = $0 { offer } else { nil }
                }[0]
            ).joined(separator: "\n") + "\n", "offer prompt")

        let shown = Mutex<[String]>([])
        let (updates, feed) = AsyncStream.makeStream(of: OfferPrompt.Update.self)
        let (lines, typing) = AsyncStream.makeStream(of: String.self)
        let offer = IncomingOffer(
            transferID: Self.transferID, peer: Self.peer, files: [Self.file], totalBytes: 10,
            deadline: .now + .seconds(600))
        feed.yield(.offer(offer))
        feed.yield(.gone(Self.transferID, Self.peer.peerID, reason: "withdrawn: " + Self.hostile))
        feed.finish()
        let prompt = OfferPrompt(show: { text in shown.withLock { $0 += text } })
        await prompt.run(updates: updates, lines: lines, respond: { _, _ in })
        typing.finish()
        let text = shown.withLock { $0 }.joined(separator: "\n") + "\n"
        Self.expectInert(text, "offer prompt and its end")
        #expect(text.contains("ended: withdrawn: evil\\u{1B}]0;owned"))
    }

    @Test func progressLineSummaryAndPeerListing() {
        for width in [20, 40, 80, 200] {
            let line = ProgressLine(name: Self.hostile, bytesDone: 1, totalBytes: 2, rate: 1, secondsLeft: 1)
            let rendered = line.render(width: width)
            #expect(!rendered.unicodeScalars.contains { TerminalText.needsEscape($0) }, "\(rendered.debugDescription)")
        }
        let summary = TransferSummary(
            files: 1, bytes: 1, seconds: 1,
            peers: [.init(name: Self.hostile, peerID: nil, failure: "the receiver cancelled: " + Self.hostile)])
        Self.expectInert(summary.text, "summary")
        Self.expectInert(PeerFormat.name(Self.peer) + "\n", "peer name")
        Self.expectInert(TransferReporter.text(for: Self.outcome(.receiving, failure: nil)) + "\n", "received line")
    }

    @Test func verboseLogLinesAreEscaped() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-log-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: config) }
        let stderr = CapturingTextSink()
        let context = CommandContext(
            stdout: CapturingTextSink(), stderr: stderr, environment: ["XDG_CONFIG_HOME": config.path])
        let setup = try SessionSetup(
            global: GlobalOptions(verbose: 2), context: context, mode: .peer, acceptPolicy: .all)
        // What the engine logs about a peer that broke the protocol, and a published name.
        setup.configuration.log?(1, "peer 1234 broke the transfer protocol: " + Self.hostile)
        setup.configuration.log?(2, "published dir/" + Self.hostile + " from " + Self.hostile)
        Self.expectInert(stderr.text, "-v log lines")
        #expect(stderr.text.split(separator: "\n").count == 2)
    }
}
