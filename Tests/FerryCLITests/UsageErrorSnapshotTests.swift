import Testing

@testable import FerryCLI

/// Pins the exact text and exit code of usage errors: `Error:` line, usage line, hint; exit 64; stdout empty.
@Suite struct UsageErrorSnapshotTests {
    static let peersUsage = """
        Usage: ferry peers [--timeout <seconds>] [--json] [--no-localsend]
               [<global options>]
          See 'ferry peers --help' for more information.
        """

    static let chatUsage = """
        Usage: ferry chat [--mode <mode>] [--max-peers <n>] [--accept <policy>]
               [--disconnect-timeout <seconds>] [--json] [<global options>]
          See 'ferry chat --help' for more information.
        """

    static let rootUsage = """
        Usage: ferry <subcommand>
          See 'ferry --help' for more information.
        """

    @Test func unknownSubcommand() async {
        #expect(
            await FerryRun.run(["send-all"])
                == .usageError(
                    "Error: Unknown subcommand 'send-all'; choose one of: peers, send, receive, watch, chat, id,"
                        + " trust, hash, completions\n" + Self.rootUsage)
        )
        #expect(
            await FerryRun.run(["peer"])
                == .usageError("Error: Unknown subcommand 'peer'. Did you mean 'peers'?\n" + Self.rootUsage)
        )
        #expect(
            await FerryRun.run(["help", "chta"])
                == .usageError("Error: Unknown subcommand 'chta'. Did you mean 'chat'?\n" + Self.rootUsage)
        )
    }

    @Test func unknownOptionWithSuggestion() async {
        #expect(
            await FerryRun.run(["peers", "--tiemout", "3"])
                == .usageError("Error: Unknown option '--tiemout'. Did you mean '--timeout'?\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["chat", "--max-peer=3"])
                == .usageError("Error: Unknown option '--max-peer'. Did you mean '--max-peers'?\n" + Self.chatUsage)
        )
        #expect(
            await FerryRun.run(["--sesion", "x", "peers"])
                == .usageError("Error: Unknown option '--sesion'. Did you mean '--session'?\n" + Self.rootUsage)
        )
    }

    @Test func unknownOptionWithoutSuggestion() async {
        #expect(
            await FerryRun.run(["peers", "--colour"])
                == .usageError("Error: Unknown option '--colour'\n" + Self.peersUsage)
        )
        #expect(await FerryRun.run(["peers", "-x"]) == .usageError("Error: Unknown option '-x'\n" + Self.peersUsage))
    }

    @Test func missingOptionValue() async {
        #expect(
            await FerryRun.run(["peers", "--timeout"])
                == .usageError("Error: Missing value for '--timeout <seconds>'\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["chat", "--name", "--json"])
                == .usageError("Error: Missing value for '--name <name>'\n" + Self.chatUsage)
        )
        #expect(
            await FerryRun.run(["--session"])
                == .usageError("Error: Missing value for '--session <id>'\n" + Self.rootUsage)
        )
    }

    @Test func badPort() async {
        let expected = FerryRun.usageError("Error: --port: 'abc' is not a valid port (0-65535)\n" + Self.peersUsage)
        #expect(await FerryRun.run(["peers", "--port", "abc"]) == expected)
        #expect(await FerryRun.run(["--port=abc", "peers"]) == expected)
        #expect(
            await FerryRun.run(["peers", "--port", "65536"])
                == .usageError("Error: --port: '65536' is not a valid port (0-65535)\n" + Self.peersUsage)
        )
    }

    @Test func badMode() async {
        #expect(
            await FerryRun.run(["chat", "--mode", "host"])
                == .usageError("Error: --mode: 'host' is not a valid mode (server, client, peer)\n" + Self.chatUsage)
        )
        #expect(
            await FerryRun.run(["chat", "--accept", "some"])
                == .usageError(
                    "Error: --accept: 'some' is not a valid policy (ask, all, trusted, none)\n" + Self.chatUsage)
        )
    }

    @Test func maxPeersOutOfRange() async {
        #expect(
            await FerryRun.run(["chat", "--max-peers", "0"])
                == .usageError("Error: --max-peers: the peer limit must be 1 to 1000 (got 0)\n" + Self.chatUsage)
        )
        #expect(
            await FerryRun.run(["chat", "--max-peers", "1001"])
                == .usageError("Error: --max-peers: the peer limit must be 1 to 1000 (got 1001)\n" + Self.chatUsage)
        )
        #expect(
            await FerryRun.run(["chat", "--max-peers", "many"])
                == .usageError("Error: --max-peers: 'many' is not a valid number\n" + Self.chatUsage)
        )
    }

    @Test func timeouts() async {
        #expect(
            await FerryRun.run(["peers", "--timeout", "-1"])
                == .usageError(
                    "Error: --timeout: the timeout must be 0 to 1000000000 seconds (got -1)\n" + Self.peersUsage
                )
        )
        #expect(
            await FerryRun.run(["peers", "--timeout", "soon"])
                == .usageError("Error: --timeout: 'soon' is not a valid number of seconds\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["peers", "--timeout", "inf"])
                == .usageError("Error: --timeout: 'inf' is not a valid number of seconds\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["chat", "--disconnect-timeout", "0"])
                == .usageError(
                    "Error: --disconnect-timeout: the timeout must be 2 to 86400 seconds, as peers send a heartbeat"
                        + " every second (got 0)\n"
                        + Self.chatUsage
                )
        )
    }

    @Test func unexpectedArgument() async {
        #expect(
            await FerryRun.run(["peers", "alice"])
                == .usageError("Error: Unexpected argument 'alice'\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["peers", "--", "--json"])
                == .usageError("Error: Unexpected argument '--json'\n" + Self.peersUsage)
        )
    }

    @Test func sessionOf65Bytes() async {
        let session = String(repeating: "s", count: 65)
        #expect(
            await FerryRun.run(["peers", "--session", session])
                == .usageError(
                    "Error: --session: a session ID must be 1 to 64 UTF-8 bytes (got 65)\n" + Self.peersUsage)
        )
        // 22 three-byte characters: 22 characters but 66 bytes.
        #expect(
            await FerryRun.run(["chat", "--session", String(repeating: "€", count: 22)])
                == .usageError("Error: --session: a session ID must be 1 to 64 UTF-8 bytes (got 66)\n" + Self.chatUsage)
        )
        #expect(
            await FerryRun.run(["peers", "--session="])
                == .usageError("Error: --session: a session ID must be 1 to 64 UTF-8 bytes (got 0)\n" + Self.peersUsage)
        )
    }

    @Test func otherGlobalOptions() async {
        #expect(
            await FerryRun.run(["peers", "--name", String(repeating: "n", count: 65)])
                == .usageError("Error: --name: a display name must be 1 to 64 UTF-8 bytes (got 65)\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["peers", "--name", "evil\u{1B}[2J"])
                == .usageError("Error: --name: a display name must not contain control characters\n" + Self.peersUsage)
        )
        #expect(
            await FerryRun.run(["peers", "--peer", "10.0.0.1"])
                == .usageError(
                    "Error: --peer: '10.0.0.1' is not a valid address; use HOST:PORT, "
                        + "e.g. 192.168.1.20:41971 or [fe80::1%eth0]:41971\n" + Self.peersUsage
                )
        )
        #expect(
            await FerryRun.run(["peers", "--interface", "../eth0"])
                == .usageError(
                    "Error: --interface: '../eth0' is not a valid interface name "
                        + "(1 to 15 bytes without '/', ':' or spaces, e.g. lo or eth0)\n" + Self.peersUsage
                )
        )
    }

    @Test func flagWithValue() async {
        #expect(
            await FerryRun.run(["peers", "--json=yes"])
                == .usageError("Error: Option '--json' does not take a value\n" + Self.peersUsage)
        )
    }

    @Test func missingSubcommand() async {
        #expect(
            await FerryRun.run(["--session", "s", "-v"])
                == .usageError(
                    "Error: Missing subcommand; choose one of: peers, send, receive, watch, chat, id, trust,"
                        + " hash, completions\n"
                        + Self.rootUsage)
        )
    }

    @Test func controlCharactersInErrorsAreEscaped() async {
        #expect(
            await FerryRun.run(["peers", "\u{1B}]0;pwned\u{07}"])
                == .usageError("Error: Unexpected argument '\\u{1B}]0;pwned\\u{7}'\n" + Self.peersUsage)
        )
    }
}
