import Testing

@testable import FerryCLI

/// Pins the exact help text, as users and scripts see it.
@Suite struct HelpSnapshotTests {
    static let rootHelp = """
        OVERVIEW: Find peers on the local network and exchange files and messages.

        ferry brings the session model of GameKit's GKSession to Linux: peers of a
        session discover each other by UDP multicast, ask to connect, are accepted or
        denied, then exchange reliable and unreliable messages.

        Global options (--session, --name, --port, --peer, --interface, -v) may come
        before or after the subcommand; 'ferry help <subcommand>' lists them. 'ferry
        help --man' prints the manual page, ferry(1).

        USAGE: ferry <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          peers                   List the peers of the session as they are discovered.
          send                    Send files to peers of the session.
          receive                 Receive files from peers of the session into a
                                  directory.
          watch                   Send every new file that appears in a directory to
                                  peers.
          chat                    Chat line by line with every peer of the session.
          id                      Show this install's device ID and display name.
          trust                   List, pin and unpin the peers this install trusts.
          hash                    Print the ferry digest of files, to compare copies.
          completions             Print a shell completion script for bash, zsh or fish.

          See 'ferry help <subcommand>' for detailed help.
        """

    static let globalOptionsHelp = """
        GLOBAL OPTIONS:
          --session <id>          Session ID; peers with another ID never see each
                                  other. (default: $FERRY_SESSION, else ferry)
          --name <name>           Display name shown to other peers. (default:
                                  $FERRY_NAME, else the host name)
          --port <n>              TCP port to accept links on; 0 picks any free port.
                                  (default: 41971, falling back to a free port when
                                  taken)
          --peer <host:port>      Connect to this address directly, for networks where
                                  multicast does not pass. Repeatable.
          --interface <name>      Discover peers only on this network interface (e.g.
                                  lo). Repeatable. (default: $FERRY_INTERFACE,
                                  comma-separated, else every multicast-capable
                                  interface)
          -v, --verbose           Log protocol events to stderr. Repeat for more detail.
        """

    static let peersHelp = """
        OVERVIEW: List the peers of the session as they are discovered.

        Prints a header line, then a line for each peer when it is found and each time
        its state changes: its name, the start of its device ID, its address, its state,
        and what it does with connections: 'accepts connections' (a ferry receive, or a
        chat in --mode server), 'accepts and makes connections' (a chat), 'only makes
        connections' or 'accepts none now'. With --json, the same as one JSON object per
        line, whose mode (server, peer, client) and accepting keys say it. LocalSend
        devices (phones and desktops running the LocalSend app) are listed too, found on
        LocalSend's multicast group: their alias, the start of their certificate
        fingerprint, their address, and 'LocalSend' with their model and type in the
        last column (a 'localsend' JSON event); ferry announces itself there while it
        lists.

        USAGE: ferry peers [--timeout <seconds>] [--json] [--no-localsend]
               [<global options>]

        OPTIONS:
          --timeout <seconds>     Stop listing after this many seconds; 0 runs until
                                  interrupted. (default: 3)
          --json                  Print one JSON object per line instead of text.
          --no-localsend          Do not list LocalSend devices nor announce to them.
          -h, --help              Show help information.
        """ + "\n\n" + globalOptionsHelp

    static let completionsHelp = """
        OVERVIEW: Print a shell completion script for bash, zsh or fish.

        Install it where your shell looks for completions, e.g.:
          ferry completions bash > ~/.local/share/bash-completion/completions/ferry
          ferry completions zsh > ~/.zfunc/_ferry   (with ~/.zfunc in fpath)
          ferry completions fish > ~/.config/fish/completions/ferry.fish

        USAGE: ferry completions <shell> [<global options>]

        ARGUMENTS:
          <shell>                 The shell to complete for: bash, zsh, fish.

        OPTIONS:
          -h, --help              Show help information.
        """ + "\n\n" + globalOptionsHelp

    static let chatHelp = """
        OVERVIEW: Chat line by line with every peer of the session.

        Lines typed are sent to every connected peer; lines received are printed with
        the sender's name. A peer that joins is shown as trusted (pinned with 'ferry
        trust add') or not, with its short device ID and the 6-digit pairing code of the
        link, which its screen shows too unless someone is in between: compare them
        before trusting what it writes.

        First contact is as for ferry receive. With --accept ask (the default), each
        stranger that wants to chat, or that this chat reached, is a question showing
        its device ID and that code; the next line typed answers it: y lets it in, n
        refuses it (its screen says it was not accepted), a lets it in and trusts it
        from now on. The side that dialled shows the same code while the other is asked.
        Any other line is sent as usual. Until the answer nothing typed goes to the
        stranger and nothing it writes is shown (a few lines are kept, cut to 4 KiB
        each, and shown if it is let in); a question nobody answers within 60 seconds
        refuses the stranger. At most 16 questions wait; more strangers are refused as
        busy. A peer that did not let this chat in is tried again after 60 seconds; one
        this chat refused is not, until it is pinned (the trusted-peers file is followed
        while the chat runs). Trusted peers join without a question. When stdin is not a
        terminal nobody can be asked, so only trusted peers join (use --accept all for
        everyone). --accept trusted refuses every stranger without asking; --accept none
        denies every request and refuses every stranger this chat dials.

        Commands:
          /peers             List the peers and their states.
          /unreliable TEXT   Send TEXT as a datagram, which may be lost.
          /help              Show these commands.
          /quit              Disconnect from every peer and exit (as does end of input).

        USAGE: ferry chat [--mode <mode>] [--max-peers <n>] [--accept <policy>]
               [--disconnect-timeout <seconds>] [--json] [<global options>]

        OPTIONS:
          --mode <mode>           Advertise and accept (server), browse and connect
                                  (client), or both (peer). (values: server, client,
                                  peer; default: peer)
          --max-peers <n>         Connect to at most this many peers; further requests
                                  are denied. (default: 16)
          --accept <policy>       Ask about each stranger, let everyone in, trusted
                                  (pinned) peers only, or deny every request. (values:
                                  ask, all, trusted, none; default: ask)
          --disconnect-timeout <seconds>
                                  Consider a silent peer gone after this many seconds.
                                  (default: 10)
          --json                  Print one JSON object per line instead of text.
          -h, --help              Show help information.
        """ + "\n\n" + globalOptionsHelp

    @Test(arguments: [[], ["--help"], ["-h"], ["help"]])
    func rootHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.rootHelp))
    }

    @Test(arguments: [
        ["peers", "--help"], ["peers", "-h"], ["help", "peers"], ["--help", "peers"],
        ["--session", "x", "peers", "--timeout", "5", "--help"], ["peers", "--bogus", "--help"],
        ["peers", "-vh"],
    ])
    func peersHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.peersHelp))
    }

    @Test(arguments: [["chat", "--help"], ["help", "chat"], ["chat", "--mode", "bogus", "-h"]])
    func chatHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.chatHelp))
    }

    @Test(arguments: [["completions", "--help"], ["help", "completions"], ["completions", "tcsh", "-h"]])
    func completionsHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.completionsHelp))
    }

    @Test func version() async {
        #expect(await FerryRun.run(["--version"]) == .printed("ferry 0.1.0"))
        #expect(await FerryRun.run(["--session", "x", "--version"]) == .printed("ferry 0.1.0"))
    }

    @Test func helpFitsInEightyColumns() async {
        for arguments in [
            ["--help"], ["help", "peers"], ["help", "chat"], ["help", "send"], ["help", "receive"],
            ["help", "watch"], ["help", "completions"],
        ] {
            let text = await FerryRun.run(arguments).stdout
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "\(arguments): \(line)")
                #expect(!line.hasSuffix(" "), "\(arguments): trailing space in \(line)")
            }
        }
    }
}
