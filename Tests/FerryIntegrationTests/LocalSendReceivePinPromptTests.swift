import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests.LocalSendReceiveTests {
    /// Issue 29, "PIN support (`--pin-file FILE` or a prompt)": `ferry receive --ask-pin` on a terminal asks for the PIN
    /// twice without echo before it serves, and then LocalSend senders must give that PIN (401 without it or with
    /// another, 200 with it). A person types it in a tmux pane inside the receiving host's namespace; the senders'
    /// requests come from the other host with a client certificate, as the apps send them.
    @Test func aPinTypedAtTheAskPinPromptIsTheOneSendersMustGiveAndItIsNotShown() async throws {
        try await IntegrationTests.LocalSendPeerTests.onBed(hosts: 2, peers: []) { bed, files in
            let config = try TemporaryDirectory(prefix: "ferry-ls-askpin-config")
            let inbox = try TemporaryDirectory(prefix: "ferry-ls-askpin-inbox")
            defer {
                config.remove()
                inbox.remove()
            }
            let pane = try TerminalPane(
                [
                    "receive", "--ask-pin", "--accept", "all", "--into", inbox.path, "--name", "ferry-box", "--port",
                    "0", "--session", "ls-askpin-\(UInt32.random(in: 0...UInt32.max))",
                ],
                environment: ["XDG_CONFIG_HOME": config.path], name: "lsaskpin", namespace: bed.hosts[1].namespace)
            defer { pane.close() }
            try pane.waitFor("PIN LocalSend senders must give (not shown):")
            try pane.type("4821")
            try pane.waitFor("The same PIN again:")
            try pane.type("4821")
            let screen = try pane.waitFor("LocalSend apps can send here too")
            #expect(!screen.contains("4821"), "\(screen)")

            try Self.expectOnlyPinAccepted(
                "4821", bed: bed, from: bed.hosts[0], to: bed.hosts[1], files: files,
                output: { (try? pane.text()) ?? "" })
        }
    }

    /// Two different PINs at the two prompts: nothing is served, and the person is told to run it again.
    @Test func twoDifferentPinsAtTheAskPinPromptServeNothing() async throws {
        try await IntegrationTests.LocalSendPeerTests.onBed(hosts: 1, peers: []) { bed, _ in
            let config = try TemporaryDirectory(prefix: "ferry-ls-askpin-config")
            defer { config.remove() }
            let pane = try TerminalPane(
                ["receive", "--ask-pin", "--into", config.path + "/inbox", "--port", "0"],
                environment: ["XDG_CONFIG_HOME": config.path], name: "lsaskpin2", namespace: bed.hosts[0].namespace)
            defer { pane.close() }
            try pane.waitFor("PIN LocalSend senders must give (not shown):")
            try pane.type("4821")
            try pane.waitFor("The same PIN again:")
            try pane.type("4822")
            let (status, text) = try pane.waitForExit()
            #expect(status == 1, "\(text)")
            #expect(text.contains("the two PINs differ; nothing was served"), "\(text)")
            #expect(!text.contains("receiving into"), "\(text)")
            #expect(!FileManager.default.fileExists(atPath: config.path + "/inbox"))
        }
    }
}
