import FerrySecurity
import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// Issue 29, "Trust", on the receive side: a LocalSend device is known by its certificate's hash, shown on first
    /// contact as LocalSend's own Verify page shows it, pinned by `always` or `ferry trust add --localsend`, listed and
    /// removed as a LocalSend device. Real peers only: localsendd (which presents its certificate when it sends, as
    /// every LocalSend app does) in one network namespace, a real `ferry receive` in another.
    @Suite("LocalSend trust", .serialized)
    struct LocalSendTrustTests {
        /// The question of a prompt that offers `always`.
        static let question = "Accept? [y]es, [n]o, [a]lways"

        /// The text of LocalSend's Verify page (apps 1.18, "Text" tab) for two fingerprints, computed here the way the
        /// app does (docs/LOCALSEND.md, "Trust"): both in upper-case hex, sorted as strings, joined.
        static func verifyPageText(_ one: String, _ other: String) -> String {
            [one.uppercased(), other.uppercased()].sorted().joined()
        }

        /// `ferry ARGUMENTS` with the receiver's configuration, to its end: its exit status and output.
        static func ferry(_ arguments: [String], config: TemporaryDirectory) async throws -> (
            status: Int32, stdout: [String], stderr: String
        ) {
            let process = try FerryProcess.ferry(arguments, environment: ["XDG_CONFIG_HOME": config.path])
            return try await process.finish(timeout: .seconds(60))
        }

        /// `--accept trusted` (issue 29, "treat a pinned LocalSend device like a pinned ferry peer"): localsendd's first
        /// send is refused and nothing is stored; pinned by the fingerprint its app would show (`trust add --localsend`),
        /// its next send is taken without a question, and `trust list --json` shows it as a LocalSend device.
        @Test func underAcceptTrustedAnUnpinnedLocalsenddIsRefusedAndTakenOncePinnedByItsFingerprint() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                let receiver = try LocalSendReceiveTests.Receiver(on: bed.hosts[1], bed: bed, accept: "trusted")
                defer { receiver.stop() }
                let sender = try LocalSendDaemon(alias: "bob's phone", on: bed.hosts[0])
                let file = try TestFiles(in: files).random("photo.bin", size: 200_003, seed: 51)

                let refused = try sender.send([file], to: bed.hosts[1].address)
                #expect(refused.kind != "sent", "\(refused) \(receiver.process.capturedOutput())")
                #expect(try receiver.published().isEmpty)
                #expect(try TransferHarness.visibleFiles(in: receiver.inbox.path).isEmpty)
                #expect(!receiver.process.allStdoutLines.contains { $0.contains("\"event\":\"file\"") })

                let add = try await Self.ferry(
                    ["trust", "add", "--localsend", sender.fingerprint, "--name", "bobs-phone"], config: receiver.config
                )
                #expect(add.status == 0, "\(add)")
                let taken = try sender.send([file], to: bed.hosts[1].address)
                #expect(taken.kind == "sent", "\(taken) \(receiver.process.capturedOutput())")
                let event = try receiver.nextFile()
                #expect(event["ok"] as? Bool == true && event["verification"] as? String == "sha256", "\(event)")
                #expect(try receiver.published() == ["photo.bin": 200_003])

                let list = try await Self.ferry(["trust", "list", "--json"], config: receiver.config)
                let entries = list.stdout.map(LocalSendReceiveTests.json).filter { !$0.isEmpty }
                #expect(entries.count == 1, "\(list)")
                #expect(entries.first?["kind"] as? String == "localsend", "\(list)")
                #expect(entries.first?["fingerprint"] as? String == sender.fingerprint.uppercased(), "\(list)")
                #expect(entries.first?["name"] as? String == "bobs-phone", "\(list)")
            }
        }

        /// The ask prompt on a terminal (`--accept ask`): a LocalSend device's offer shows its alias, that it is a
        /// LocalSend device, its fingerprint as its app shows it, and the Verify page's text; `a` pins it as a LocalSend
        /// device (`trust list`), its next send is not asked about; `trust remove` by a fingerprint prefix unpins it and
        /// its next send is asked about again.
        @Test func theAskPromptShowsTheVerifyPagesTextAndAlwaysPinsTheLocalSendDeviceUntilRemoved() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                let inbox = try TemporaryDirectory(prefix: "ferry-ls-inbox")
                let config = try TemporaryDirectory(prefix: "ferry-ls-config")
                defer {
                    inbox.remove()
                    config.remove()
                }
                let ours = try LocalSendReceiveTests.ferryFingerprint(config: config)
                let pane = try TerminalPane(
                    [
                        "receive", "--into", inbox.path, "--accept", "ask", "--name", "ferry-box", "--port", "0",
                        "--session", "lst-\(UInt32.random(in: 0...UInt32.max))",
                    ],
                    environment: ["XDG_CONFIG_HOME": config.path], name: "lstrust", namespace: bed.hosts[1].namespace)
                defer { pane.close() }
                try pane.waitFor("LocalSend apps can send here too")
                let sender = try LocalSendDaemon(alias: "bob", on: bed.hosts[0])
                let made = TestFiles(in: files)
                let sources = [
                    try made.random("first.bin", size: 30_001, seed: 61),
                    try made.random("second.bin", size: 40_002, seed: 62),
                    try made.random("third.bin", size: 50_003, seed: 63),
                ]
                let address = bed.hosts[1].address
                func send(_ file: URL) -> Task<LocalSendDaemon.SendOutcome, any Error> {
                    Task.detached { try sender.send([file], to: address) }
                }
                let asked = IntegrationTests.InteractiveReceiveTests.self

                let first = send(sources[0])
                let screen = try pane.waitFor(Self.question)
                let fingerprint = sender.fingerprint.uppercased()
                #expect(screen.contains("From LocalSend device 'bob'"), "\(screen)")
                let verify = Self.verifyPageText(ours, fingerprint)
                let lines = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(lines.contains("fingerprint \(fingerprint)"), "\(screen)")
                #expect(
                    lines.contains(String(verify.prefix(64))) && lines.contains(String(verify.suffix(64))), "\(screen)")
                try asked.answer(pane, "a") { asked.count("is trusted from now on, by its fingerprint", in: $0) }
                let firstOutcome = try await first.value
                #expect(firstOutcome.kind == "sent", "\(firstOutcome) \((try? pane.text()) ?? "")")

                let list = try await Self.ferry(["trust", "list"], config: config)
                let row = list.stdout.first { $0.contains(fingerprint) }
                #expect(row?.hasPrefix("bob ") == true && row?.contains(" LocalSend ") == true, "\(list)")

                // Pinned: the next send is taken unasked.
                let secondOutcome = try await send(sources[1]).value
                #expect(secondOutcome.kind == "sent", "\(secondOutcome) \((try? pane.text()) ?? "")")
                try pane.waitFor("accepted, a trusted peer (key verified)")
                #expect(asked.count(Self.question, in: try pane.text()) == 1)

                // Removed by the start of the fingerprint the app shows: asked again, and `n` refuses.
                let remove = try await Self.ferry(["trust", "remove", String(fingerprint.prefix(12))], config: config)
                #expect(
                    remove.status == 0 && remove.stdout.first?.contains("No longer trusted: 'bob'") == true, "\(remove)"
                )
                let third = send(sources[2])
                try asked.waitUntil(pane, "the offer to be asked again") { asked.count(Self.question, in: $0) == 2 }
                try asked.answer(pane, "n", echo: asked.lines("denied"))
                let thirdOutcome = try await third.value
                #expect(thirdOutcome.kind != "sent", "\(thirdOutcome)")
                #expect(
                    try TransferHarness.visibleFiles(in: inbox.path) == ["first.bin": 30_001, "second.bin": 40_002])
            }
        }
    }
}
