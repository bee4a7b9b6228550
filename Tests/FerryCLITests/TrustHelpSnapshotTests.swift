import Testing

@testable import FerryCLI

/// Pins the help and usage errors of `ferry id` and `ferry trust ...`, a group with subcommands of its own.
@Suite struct TrustHelpSnapshotTests {
    static let idHelp = """
        OVERVIEW: Show this install's device ID and display name.

        The device ID identifies this install to its peers; another machine pins it with
        'ferry trust add <id>'. It is created on first use and kept in the config
        directory ($XDG_CONFIG_HOME/ferry, else ~/.config/ferry).

        USAGE: ferry id [--json] [<global options>]

        OPTIONS:
          --json                  Print one JSON object instead of text.
          -h, --help              Show help information.
        """ + "\n\n" + HelpSnapshotTests.globalOptionsHelp

    static let trustHelp = """
        OVERVIEW: List, pin and unpin the peers this install trusts.

        A trusted peer is pinned by its device ID (what 'ferry id' prints on its
        machine), under a name that belongs to it alone: giving the name to another ID
        takes a 'remove' first, so a new key never takes over a trusted name silently.
        The list is kept in $XDG_CONFIG_HOME/ferry/trusted-peers (else ~/.config/ferry).

        USAGE: ferry trust <subcommand>

        OPTIONS:
          -h, --help              Show help information.

        SUBCOMMANDS:
          list                    List the trusted peers.
          add                     Pin a peer's device ID as trusted.
          remove                  Unpin a trusted peer.

          See 'ferry help trust <subcommand>' for detailed help.
        """

    /// `--name` of `trust add` names the peer, so the global `--name` is not listed again.
    static let trustAddHelp = """
        OVERVIEW: Pin a peer's device ID as trusted.

        Given a device ID, pins it. Given a peer's name or the short ID ferry prints
        (ABCD-EFGH) instead (or no argument and --peer HOST:PORT), finds that peer while
        it runs 'ferry receive', connects, shows its device ID and the 6-digit pairing
        code, which the receiver shows too, and pins it when you answer y: nobody has to
        copy an ID by hand. That needs a terminal.

        A peer that only sends accepts no connections, so it cannot be found that way;
        but when it connected to this install's 'ferry receive', which accepted the link
        and showed its code, its name or short ID is enough here once no running peer
        answers to it within --wait: ferry shows its device ID and the pairing code of
        that link (the one its screen showed when it sent) from
        $XDG_CONFIG_HOME/ferry/recent-peers (the last 32 peers), and pins it under the
        name you typed when you answer y. A running receiver takes the new pin within a
        second.

        Trust is one-way: each machine pins the other. On a first send, the sender's
        person compares the code with the receiver's screen (or log) and answers a to
        pin the receiver; the receiver's person answers a to its own question, or runs
        'ferry trust add NAME' there. A side that pinned the other still shows the code,
        so the other side can always compare.

        Adding an ID that is pinned already changes its name. A name belongs to one ID
        only: to give it to another one, remove the old one first.

        With --localsend, the ID is a LocalSend device's fingerprint (64 hex digits: its
        app shows them under About LocalSend, Debugging, Security), pinned as a
        LocalSend device: 'ferry receive --accept trusted' then takes its files without
        a first question. A LocalSend device is also pinned by answering a to the
        question 'ferry receive' asks about its first offer.

        USAGE: ferry trust add [--name <name>] [--localsend] [--wait <seconds>] [<peer>]
               [<global options>]

        ARGUMENTS:
          <peer>                  The peer's device ID, as 'ferry id' prints it or in 64
                                  hex digits; or the name or short ID (ABCD-EFGH) of a
                                  peer running 'ferry receive', or that connected to
                                  this install's.

        OPTIONS:
          --name <name>           The name to know the peer by. (default: none)
          --localsend             The ID is a LocalSend device's fingerprint (64 hex
                                  digits); pin it as a LocalSend device.
          --wait <seconds>        How long to look for a peer given by name. (default:
                                  10)
          -h, --help              Show help information.
        """ + "\n\n"
        + HelpSnapshotTests.globalOptionsHelp.replacingOccurrences(
            of: """
                  --name <name>           Display name shown to other peers. (default:
                                          $FERRY_NAME, else the host name)

                """,
            with: "")

    static let trustUsage = """
        Usage: ferry trust <subcommand>
          See 'ferry trust --help' for more information.
        """

    static let trustAddUsage = """
        Usage: ferry trust add [--name <name>] [--localsend] [--wait <seconds>] [<peer>]
               [<global options>]
          See 'ferry trust add --help' for more information.
        """

    static let trustRemoveUsage = """
        Usage: ferry trust remove <peer> [<global options>]
          See 'ferry trust remove --help' for more information.
        """

    @Test(arguments: [["id", "--help"], ["help", "id"], ["id", "--json", "-h"]])
    func idHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.idHelp))
    }

    @Test(arguments: [["trust", "--help"], ["help", "trust"], ["trust", "-h"], ["--help", "trust"]])
    func trustHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.trustHelp))
    }

    @Test(arguments: [
        ["trust", "add", "--help"], ["help", "trust", "add"], ["trust", "--help", "add"], ["trust", "add", "x", "-h"],
        ["-v", "trust", "add", "--bogus", "--help"],
    ])
    func trustAddHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.trustAddHelp))
    }

    @Test func helpFitsInEightyColumns() async {
        for arguments in [
            ["help", "id"], ["help", "trust"], ["help", "trust", "list"], ["help", "trust", "add"],
            ["help", "trust", "remove"],
        ] {
            let run = await FerryRun.run(arguments)
            #expect(run.code == .success)
            for line in run.stdout.split(separator: "\n") {
                #expect(line.count <= 80, "\(arguments): \(line)")
                #expect(!line.hasSuffix(" "), "\(arguments): trailing space in \(line)")
            }
        }
    }

    @Test func groupUsageErrors() async {
        #expect(
            await FerryRun.run(["trust"])
                == .usageError("Error: Missing subcommand; choose one of: list, add, remove\n" + Self.trustUsage))
        #expect(
            await FerryRun.run(["trust", "lst"])
                == .usageError("Error: Unknown subcommand 'lst'. Did you mean 'list'?\n" + Self.trustUsage))
        #expect(
            await FerryRun.run(["trust", "show"])
                == .usageError(
                    "Error: Unknown subcommand 'show'; choose one of: list, add, remove\n" + Self.trustUsage))
        #expect(
            await FerryRun.run(["help", "trust", "ad"])
                == .usageError("Error: Unknown subcommand 'ad'. Did you mean 'add'?\n" + Self.trustUsage))
        #expect(
            await FerryRun.run(["trust", "--jsn", "list"])
                == .usageError("Error: Unknown option '--jsn'\n" + Self.trustUsage))
    }

    @Test func badIDIsAUsageError() async {
        let message =
            "Error: 'ABCD-EFGH-IJKL-MNOP-QRST' is not a valid device ID; give the grouped form 'ferry id' prints (13"
            + " groups of 4) or 64 hex digits\n"
        #expect(
            await FerryRun.run(["trust", "add", "ABCD-EFGH-IJKL-MNOP-QRST"])
                == .usageError(message + Self.trustAddUsage))
        #expect(
            await FerryRun.run(["trust", "add", String(repeating: "g", count: 64)])
                == .usageError(
                    "Error: '\(String(repeating: "g", count: 64))' is not a valid device ID; give the grouped form"
                        + " 'ferry id' prints (13 groups of 4) or 64 hex digits\n" + Self.trustAddUsage))
        #expect(
            await FerryRun.run(["trust", "add"])
                == .usageError(
                    "Error: give the peer's device ID, or its name to find it on the network (or --peer HOST:PORT);"
                        + " a LocalSend device by its fingerprint: ferry trust add --localsend HEX\n"
                        + Self.trustAddUsage))
        // Any other text may be the name a peer is pinned under (TrustCommandTests.removeTakesWhatAddTakes).
        #expect(
            await FerryRun.run(["trust", "remove", ""])
                == .usageError(
                    "Error: give the trusted peer's device ID, or the name it is pinned under\n"
                        + Self.trustRemoveUsage))
    }

    /// `--localsend` pins a fingerprint; without one it is a usage error (it once paired the `--peer` as a ferry
    /// peer, the flag ignored).
    @Test func localSendWithoutAFingerprintIsAUsageErrorNotAFerryPairing() async {
        let error = FerryRun.usageError(
            "Error: --localsend takes the device's fingerprint: ferry trust add --localsend HEX (the 64 hex digits its"
                + " app shows under About LocalSend, Debugging, Security); LocalSend devices are not paired over the"
                + " network\n" + Self.trustAddUsage)
        #expect(await FerryRun.run(["trust", "add", "--localsend", "--peer", "127.0.0.1:9", "--wait", "0"]) == error)
        #expect(await FerryRun.run(["trust", "add", "--localsend"]) == error)
    }

    @Test func badNameIsAUsageError() async {
        let id = String(repeating: "ab", count: 32)
        #expect(
            await FerryRun.run(["trust", "add", id, "--name", "ev\u{1B}il"])
                == .usageError(
                    "Error: --name: a display name must not contain control characters\n" + Self.trustAddUsage))
        #expect(
            await FerryRun.run(["trust", "add", id, "--name", String(repeating: "n", count: 65)])
                == .usageError(
                    "Error: --name: a display name must be 1 to 64 UTF-8 bytes (got 65)\n" + Self.trustAddUsage))
        #expect(
            await FerryRun.run(["trust", "add", id, "extra"])
                == .usageError("Error: Unexpected argument 'extra'\n" + Self.trustAddUsage))
    }
}
