import FerryTestSupport
import FerryWire
import Foundation
import Testing

/// Issue 10, "escaping in text-mode chat": a peer whose display name and message carry escape sequences, control
/// and bidi characters is shown escaped by `ferry chat` in text mode on a real terminal (tmux): the name and the
/// text appear as visible `\u{1B}` escapes, which they cannot if the raw bytes reached the terminal.
///
/// The peer is a `StrangerLink` (a real TLS link with its own identity): `ferry` itself refuses such a `--name`.
extension IntegrationTests {
    @Suite(.serialized) struct ChatEscapingTests {
        /// Clears the screen, and reverses the text after it.
        static let hostileName = "ev\u{1B}[2Jil\u{202E}x"
        /// Sets the window title (ended by BEL), clears the screen, reverses the text.
        static let hostileText = "hi\u{1B}]0;owned\u{07}\u{1B}[2J\u{202E}there"

        /// Reads frames from `link` until `wanted` holds for one of its messages (or the link ends).
        static func read(_ link: StrangerLink, until wanted: (SessionMessage) -> Bool) async throws -> Bool {
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            while true {
                let bytes = try await link.stream.read(maxBytes: 64 << 10)
                if bytes.isEmpty { return false }
                decoder.append(bytes)
                while let frame = try decoder.nextFrame() {
                    if let message = try? SessionMessage(frame: frame), wanted(message) { return true }
                }
            }
        }

        @Test func aHostileNameAndMessageAreShownEscapedOnATerminal() async throws {
            let harness = try ChatHarness()
            let pane = try TerminalPane(
                [
                    "chat", "--session", harness.session, "--name", "watcher", "--port", "0", "--interface", "lo",
                    "--accept", "all",
                ],
                environment: harness.environment("watcher"), name: "chat")
            defer { pane.close() }
            let ready = try pane.waitFor("Type /help for commands.")
            let line = ready.split(separator: "\n").first { $0.contains("Chatting in session") } ?? ""
            let port = try #require(Int(line.split(separator: "(port ").last?.prefix { $0.isNumber } ?? ""), "\(ready)")
            let link = try await StrangerLink.open(port: port)
            defer { link.close() }
            var nonce = [UInt8](repeating: 0, count: Hello.pairingFieldLength)
            for index in nonce.indices { nonce[index] = .random(in: 0...255) }
            try await link.send(
                link.hello(session: harness.session, name: Self.hostileName) + SessionMessage.pairing(nonce).encoded()
                    + SessionMessage.connectionRequest.encoded())
            let accepted = try await Self.read(link) {
                if case .accept = $0 { return true }
                return false
            }
            #expect(accepted, "the chat did not accept the link")
            try await link.send(SessionMessage.message(Array(Self.hostileText.utf8)).encoded())
            // As README promises: control and bidi characters made visible as `\u{1B}` (written out here, so that a
            // change to the escaping fails the test).
            let name = #"ev\u{1B}[2Jil\u{202E}x"#
            let text = #"hi\u{1B}]0;owned\u{7}\u{1B}[2J\u{202E}there"#
            let screen = try pane.waitFor("> \(text)")
            #expect(screen.contains("* \(name) joined"), "\(screen)")
            #expect(screen.contains("<\(name)> \(text)"), "\(screen)")
        }
    }
}
