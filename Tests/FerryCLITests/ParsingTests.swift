import Testing

@testable import FerryCLI

/// Command lines parse to exactly the expected typed commands.
@Suite struct ParsingTests {
    @Test func peersDefaults() throws {
        let command = try #require(try parseCommand(["peers"]) as? PeersCommand)
        #expect(command == PeersCommand(timeout: 3, json: false, global: GlobalOptions()))
        #expect(command.global.session == "ferry")
        #expect(command.global.port == nil)
        #expect(!command.global.portIsExplicit)
        #expect(command.global.name == nil)
        #expect(command.global.verbose == 0)
    }

    @Test func chatDefaults() throws {
        let command = try #require(try parseCommand(["chat"]) as? ChatCommand)
        #expect(
            command
                == ChatCommand(
                    mode: .peer, maxPeers: 16, accept: .ask, disconnectTimeout: 10, json: false, global: .init())
        )
    }

    @Test func chatEveryOption() throws {
        let command = try #require(
            try parseCommand([
                "chat", "--mode", "server", "--max-peers=1000", "--accept", "none", "--disconnect-timeout", "2.5",
                "--json",
            ]) as? ChatCommand
        )
        #expect(
            command == ChatCommand(mode: .server, maxPeers: 1000, accept: .none, disconnectTimeout: 2.5, json: true))
    }

    @Test func globalOptionsBeforeAndAfterTheSubcommand() throws {
        let command = try #require(
            try parseCommand([
                "--session", "lab", "-v", "--peer", "10.0.0.2:41971", "--interface=lo",
                "peers", "--json", "--name", "Zoë's laptop", "--peer=[::1]:5000", "-vv", "--port", "0",
                "--interface", "veth0", "--timeout=0",
            ]) as? PeersCommand
        )
        let global = GlobalOptions(
            session: "lab",
            name: "Zoë's laptop",
            port: 0,
            peers: ["10.0.0.2:41971", "[::1]:5000"],
            interfaces: ["lo", "veth0"],
            verbose: 3
        )
        #expect(command == PeersCommand(timeout: 0, json: true, global: global))
        #expect(command.global.portIsExplicit)
    }

    @Test func lastValueWinsForSingleValueOptions() throws {
        let command = try #require(
            try parseCommand([
                "--session", "a", "--port", "1", "peers", "--session", "b", "--timeout", "1",
                "--timeout", "2.5", "--port", "2",
            ]) as? PeersCommand
        )
        #expect(command.global.session == "b")
        #expect(command.global.port == 2)
        #expect(command.timeout == 2.5)
    }

    @Test func valuesMayLookLikeWordsOrNegativeNumbers() throws {
        let named = try #require(try parseCommand(["peers", "--name", "peers"]) as? PeersCommand)
        #expect(named.global.name == "peers")
        let dashed = try #require(try parseCommand(["peers", "--name=-x-", "--session=a=b"]) as? PeersCommand)
        #expect(dashed.global.name == "-x-")
        #expect(dashed.global.session == "a=b")
        // A negative number is taken as the value, so that validation can explain the range.
        #expect(throws: CLIError.usage("--timeout: the timeout must be 0 to 1000000000 seconds (got -0.5)")) {
            try parseCommand(["peers", "--timeout", "-0.5"])
        }
    }

    @Test func doubleDashEndsOptions() throws {
        #expect(throws: CLIError.usage("Unexpected argument '--json'")) {
            try parseCommand(["peers", "--", "--json"])
        }
        let command = try #require(try parseCommand(["--", "peers"]) as? PeersCommand)
        #expect(command == PeersCommand())
    }

    @Test func peerAddresses() {
        #expect(GlobalOptions.splitHostPort("192.168.1.20:41971")! == ("192.168.1.20", 41971))
        #expect(GlobalOptions.splitHostPort("alice.local:1")! == ("alice.local", 1))
        #expect(GlobalOptions.splitHostPort("[fe80::1%eth0]:80")! == ("fe80::1%eth0", 80))
        for bad in ["", ":80", "host", "host:", "host:0", "host:65536", "::1:80", "[::1]", "[]:80", "[::1:80", "a b:1"]
        {
            #expect(GlobalOptions.splitHostPort(bad) == nil, "\(bad)")
        }
    }

    @Test func hostNameIsAUsableDisplayName() {
        let name = GlobalOptions.hostName()
        #expect((1...64).contains(name.utf8.count))
        #expect(GlobalOptions().displayName == name)
        #expect(GlobalOptions(name: "x").displayName == "x")
    }

    @Test func editDistance() {
        #expect(EditDistance.between("", "abc") == 3)
        #expect(EditDistance.between("timeout", "timeout") == 0)
        #expect(EditDistance.between("--tiemout", "--timeout") == 2)
        #expect(EditDistance.between("peer", "peers") == 1)
        #expect(EditDistance.closest(to: "--jsno", in: ["--json", "--name"]) == "--json")
        #expect(EditDistance.closest(to: "--colour", in: ["--json", "--name"]) == nil)
    }

    @Test func wrapping() {
        #expect(TextWrapper.wrap("aaa bbb ccc", prefix: "> ", indent: 2, width: 9) == "> aaa bbb\n  ccc")
        #expect(TextWrapper.wrap("a\n\n  keep   spacing", indent: 4) == "a\n\n      keep   spacing")
        #expect(TextWrapper.wrap("averyveryverylongword x", width: 5) == "averyveryverylongword\nx")
        #expect(
            TextWrapper.wrap(items: ["[--a <b>]", "[--c <d>]"], prefix: "U: ", indent: 3, width: 14)
                == "U: [--a <b>]\n   [--c <d>]")
    }
}
