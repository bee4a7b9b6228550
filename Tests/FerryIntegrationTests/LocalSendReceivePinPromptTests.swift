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

            let body = Self.prepareBody(alias: "a", files: [("f1", "typed.bin", 3, nil)])
            let (client, address) = (bed.hosts[0], bed.hosts[1].address)
            let alice = try ClientCertificate.make(in: files, name: "alice")
            let without = try Self.curl(
                bed, from: client, to: address, "/api/localsend/v2/prepare-upload", body: body, certificate: alice)
            #expect(without.status == 401, "\(without)")
            let wrong = try Self.curl(
                bed, from: client, to: address, "/api/localsend/v2/prepare-upload?pin=1111", body: body,
                certificate: alice)
            #expect(wrong.status == 401, "\(wrong)")
            let right = try Self.curl(
                bed, from: client, to: address, "/api/localsend/v2/prepare-upload?pin=4821", body: body,
                certificate: alice)
            #expect(right.status == 200, "\(right) \((try? pane.text()) ?? "")")
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
