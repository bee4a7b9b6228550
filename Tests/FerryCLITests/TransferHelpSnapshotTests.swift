import Testing

@testable import FerryCLI

/// Pins the exact help of the transfer commands: send, receive, watch.
@Suite struct TransferHelpSnapshotTests {
    static let sendHelp = """
        OVERVIEW: Send files to peers of the session.

        The files go to every peer named with --to, once it is discovered and has
        accepted the connection; a directory is sent whole, its empty folders included.
        A PEER is a display name, the start of a device ID or peer ID (at least 4
        characters), or an IP address and port (HOST:PORT; host names are not looked
        up). A display name is what a peer calls itself, so anyone can take one; a name
        pinned here ('ferry trust add') names the pinned device only. When another
        device answers to it too, the files go to the pinned one and a warning names the
        other (its short device ID and address). When only another device answers to it,
        nothing goes to that one, with or without --trusted-only and without asking
        about a code (its key is not the one pinned under the name): ferry says so and
        waits for the pinned device until --wait runs out.

        With --all, the files go to every receiving peer found: ferry waits until 2.5 s
        pass with no new peer after the first one (at most --wait seconds), then sends
        to all of them at once. With neither, on a terminal, a picker lists the peers as
        they are found.

        On a terminal, before anything is offered to a receiver this install has not
        pinned, ferry shows the 6-digit pairing code of the link and asks whether the
        receiver shows the same: y sends, a sends and trusts the receiver from now on,
        anything else (or no answer within a minute) sends nothing to it. Trusted
        receivers are not asked. Without a terminal nobody is asked, so a script cannot
        tell the receiver from someone in between who answers under its name;
        --trusted-only refuses every receiver that is not pinned (pin one with 'ferry
        trust add NAME' while it runs 'ferry receive'). On a terminal, until a receiver
        answers the offer, a line says that ferry waits for it to accept (a person asked
        there has 60 s to answer, unless its --ask-timeout says otherwise).

        With --text, a short text (at most 64 KiB of UTF-8) goes too, as a message that
        ferry receive prints with the sender's name (it keeps it as a file only when it
        was started with --into); it may be sent alone or with files.

        To several receivers at once, a send is a broadcast: ferry gives each receiver
        part of the chunks and the receivers pass them on to each other, so the sender's
        link carries about one copy whatever their number. A receiver checks every chunk
        against the digest ferry sent it and cannot change a byte unnoticed; one that
        passes on a bad chunk is cut off and named. The summary says how much ferry sent
        itself and how much the receivers relayed. --no-relay sends every chunk to every
        receiver directly.

        --as NAME sends the one FILE given under NAME instead of its own (a folder: its
        files go under NAME/); the receiver sees only NAME. With several FILEs it is
        refused: it names one.

        A FILE of - sends standard input, under the name given with --as (stdin by
        default): ferry reads it to its end first (an offer names each file's size),
        into a temporary file in $TMPDIR (else /tmp) that is unlinked as soon as it is
        created, so nothing is left behind however ferry ends; it says so on stderr when
        the input is large. - may be given once, beside other files. Read from a
        terminal, the input ends with Ctrl-D; an empty input sends an empty file (and
        says so). When standard input is a pipe and stderr a terminal, the picker and
        the pairing-code question read the terminal (/dev/tty).

        Each file is hashed as it is sent (a SHA-256 of every chunk). For a file of 4
        MiB or more the digests are kept in $XDG_CACHE_HOME/ferry/digests (else
        ~/.cache/ferry/digests; the 4096 last used), so sending it again unchanged (the
        same inode, size, modification and change time) reads it without hashing it;
        receivers still check every chunk. --rehash hashes every file anyway (and keeps
        the new digests).

        LocalSend apps (phones, other desktops) are receivers too, unless
        --no-localsend: --to takes a LocalSend device's alias or the start of its
        fingerprint (a name that both a ferry peer and a LocalSend device answer to is
        refused as ambiguous; a name pinned here names that device only), or HOST:53317;
        --all includes every LocalSend device heard, each sent to by its own upload. The
        receiver's certificate must hash to the fingerprint it announced (or, for
        HOST:53317 no verified announcement names, to a pinned one) before a request
        byte is written, HTTPS only. A receiver not pinned here is asked about on a
        terminal: ferry shows what the app's Verify page shows (Text), and a pins it (as
        'ferry trust add --localsend FINGERPRINT' does); without a terminal, a
        discovered device is sent to, a bare address is refused, and --trusted-only
        refuses both. A PIN the receiver asks for comes from --pin-file FILE (given only
        to a receiver that asks), or is asked on the terminal without echo, one prompt
        at a time (never on the command line). A file changed after it was hashed fails;
        a file the receiver declined counts as not arrived. Folders keep their relative
        paths in the names sent; empty folders are not sent to LocalSend receivers;
        --text arrives as a message in the app.

        Exit status: 0 when every file reached every peer, 1 otherwise, 130 when
        interrupted.

        USAGE: ferry send [--to <peer> ...] [--all] [--wait <seconds>] [--as <name>]
               [--compress <mode>] [--trusted-only] [--text <text>] [--no-relay]
               [--rehash] [--no-localsend] [--pin-file <file>] [--json] [<file> ...]
               [<global options>]

        ARGUMENTS:
          <file>                  A file or directory to send; - for standard input.

        OPTIONS:
          --to <peer>             Send to this peer. Repeatable.
          --all                   Send to every receiving peer found.
          --wait <seconds>        How long to look for the peers before giving up.
                                  (default: 10)
          --as <name>             The name standard input (-) is sent under; without -,
                                  the name the one FILE (or folder) is sent under.
                                  (default: stdin)
          --compress <mode>       Compress where it pays (auto), always try zlib or
                                  zstd, or never (none). (values: auto, zlib, zstd,
                                  none; default: auto)
          --trusted-only          Send only to trusted (pinned) receivers; refuse every
                                  other one before anything is sent.
          --text <text>           Send this short text as a message (at most 64 KiB).
          --no-relay              To several receivers, send each one every chunk
                                  directly; they pass nothing on to each other.
          --rehash                Hash every file again instead of using the digests
                                  kept from an earlier send (then keep the new ones).
          --no-localsend          Do not look for LocalSend devices nor send to them.
          --pin-file <file>       The PIN a LocalSend receiver asks for, in FILE's first
                                  line (a file others can read is refused).
          --json                  Print one JSON object per line for every event instead
                                  of text.
          -h, --help              Show help information.
        """ + "\n\n" + HelpSnapshotTests.globalOptionsHelp

    static let receiveHelp = """
        OVERVIEW: Receive files from peers of the session into a directory.

        Each file is written beside its destination and appears under its name only once
        it is complete and its checksum matches; a name that exists gets a numbered
        variant, and nothing outside the directory is ever touched. An interrupted
        transfer resumes where it stopped when the sender tries again.

        Each peer that connects shows the 6-digit pairing code of its link at once;
        ferry send shows the same code, unless someone is in between, and asks its user
        to confirm it before anything is sent. With --accept ask, each offer shows the
        sender, its device ID and that code, the files and their sizes, and waits for y,
        n or a (always: accept, and trust the sender from now on); it is denied when
        nobody answers within --ask-timeout seconds (60 by default). A sender may have 3
        offers asked about a minute, everyone together 10: more are denied without
        asking, and the sender is told so. Offers from trusted peers are accepted
        without asking; when stdin is not a terminal, nobody can be asked, so those are
        the only ones accepted. With --accept trusted (for a headless receiver), only
        trusted peers can connect; see ferry trust. Every refused peer leaves a line
        with its device ID, to pin it with ferry trust add.

        When a sender broadcasts to several receivers, this one passes the chunks it has
        checked on to the other receivers the sender named, and takes chunks from them,
        over links opened without asking (the sender vouched for them; they are not
        shown as connected peers). Every chunk is checked against the sender's digest; a
        receiver that passes on a bad one is cut off and named. --no-relay takes
        everything from the sender and uploads nothing to other receivers (a metered
        link, or a machine that must not serve others).

        A text sent with ferry send --text is printed with the sender's name (escaped);
        it is kept as a file (message.txt) only when --into names the directory.

        Partial files of interrupted transfers stay in DIR/.ferry-staging so that a
        transfer sent again resumes; those untouched for 7 days are removed when ferry
        receive starts (it says how many), and --clear-staged removes them all now
        (except those a running receiver is writing).

        LocalSend apps (phones, other desktops) can send here too: ferry serves
        LocalSend's HTTPS API on port 53317 beside its own protocol, with the same
        --accept policy, checks and summaries (their peers show their certificate's
        SHA-256 as device ID; pin one with ferry trust add). --pin-file FILE makes
        LocalSend senders give the PIN in FILE (its first line; a file others can read
        is refused), --ask-pin the one typed at a prompt (twice, not shown);
        --no-localsend serves ferry peers only. LocalSend follows --interface: with
        none, ferry serves it on every IPv4 address and announces itself on every
        interface but loopback; with some, on those; with only --interface lo it is off
        (no phone reaches loopback). When a LocalSend app on this machine holds the
        port, ferry says so once and goes on with its own protocol.

        The first line tells where ferry listens; with --json it is
        {"event":"listening","port":P,"directory":"...","name":"...","peerID":"..."}.

        USAGE: ferry receive [--into <dir>] [--accept <policy>]
               [--ask-timeout <seconds>] [--once] [--no-relay] [--clear-staged]
               [--no-localsend] [--pin-file <file>] [--ask-pin]
               [--localsend-port <port>] [--json] [<global options>]

        OPTIONS:
          --into <dir>            Put received files in this directory (created if
                                  missing, but not its parents). (default:
                                  XDG_DOWNLOAD_DIR from ~/.config/user-dirs.dirs, else
                                  ~/Downloads)
          --accept <policy>       Ask before accepting each offer, accept all, or accept
                                  trusted peers only. (values: ask, all, trusted;
                                  default: ask)
          --ask-timeout <seconds> With --accept ask, deny an offer nobody answered
                                  within this time. (default: 60)
          --once                  Exit after the first transfer: 0 if every file
                                  arrived, 1 otherwise.
          --no-relay              In a broadcast, take every chunk from the sender and
                                  pass nothing on to other receivers.
          --clear-staged          Remove the partial files kept for resuming
                                  (DIR/.ferry-staging), say how many, and exit.
          --no-localsend          Serve ferry peers only, not LocalSend apps.
          --pin-file <file>       LocalSend senders must give the PIN this file holds
                                  (never on the command line).
          --ask-pin               Ask on the terminal (without echo) for the PIN
                                  LocalSend senders must give.
          --localsend-port <port> Serve LocalSend apps on this TCP port. (default:
                                  53317)
          --json                  Print one JSON object per line for every event instead
                                  of text.
          -h, --help              Show help information.
        """ + "\n\n" + HelpSnapshotTests.globalOptionsHelp

    static let watchHelp = """
        OVERVIEW: Send every new file that appears in a directory to peers.

        Files already in the directory when ferry starts are not sent: only files that
        appear later, once they are closed after writing or moved in. Each file is sent
        once; a file written again with another size or time is sent again. Hidden names
        (.name), editor files (#name) and temporary files (ending in ~, .tmp, .part,
        .swp or .crdownload) are skipped; subdirectories are not watched.

        A file written again replaces, at the receiver, the version this watch delivered
        there, once the new one arrived whole and verified (until then the old one is
        there, whole). It never replaces a file another peer sent or one changed at the
        receiver since it arrived: the new version is then kept beside it as 'name
        (1).ext'. A receiver older than this version always keeps both.

        While a peer is away its files wait in a queue, sent in order when it is seen
        again. With --all, every receiving peer that appears gets the files that appear
        after it. Runs until Ctrl-C (or SIGTERM); when the directory is removed, moved
        away or unmounted, it says so and exits 1.

        Nobody is asked to compare pairing codes, so watch cannot tell a receiver from
        someone in between who answers under its name; --trusted-only sends only to
        receivers this install has pinned (pin one with 'ferry trust add NAME' while it
        runs 'ferry receive') and refuses every other one before anything is offered to
        it. A name pinned here names the pinned device only, as for 'ferry send':
        another device answering to it is named in a warning and gets nothing.

        USAGE: ferry watch [--to <peer> ...] [--all] [--compress <mode>]
               [--trusted-only] [--json] <dir> [<global options>]

        ARGUMENTS:
          <dir>                   The directory to watch.

        OPTIONS:
          --to <peer>             Send to this peer (as for 'ferry send'). Repeatable.
          --all                   Send to every receiving peer found.
          --compress <mode>       Compress where it pays (auto), always try zlib or
                                  zstd, or never (none). (values: auto, zlib, zstd,
                                  none; default: auto)
          --trusted-only          Send only to trusted (pinned) receivers; refuse every
                                  other one before anything is sent.
          --json                  Print one JSON object per line for every event instead
                                  of text.
          -h, --help              Show help information.
        """ + "\n\n" + HelpSnapshotTests.globalOptionsHelp

    @Test(arguments: [["send", "--help"], ["help", "send"], ["send", "a.jpg", "--to", "bob", "-h"], ["send", "-h"]])
    func sendHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.sendHelp))
    }

    @Test(arguments: [["receive", "--help"], ["help", "receive"], ["receive", "--accept", "bogus", "-h"]])
    func receiveHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.receiveHelp))
    }

    @Test(arguments: [["watch", "--help"], ["help", "watch"], ["--session", "s", "watch", "-h"]])
    func watchHelp(arguments: [String]) async {
        #expect(await FerryRun.run(arguments) == .printed(Self.watchHelp))
    }
}
