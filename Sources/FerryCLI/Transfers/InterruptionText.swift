import FerryTransfer
import FerryWire

/// What a person is told about a transfer that stopped before its end, and about one that resumed from such a stop:
/// what happened, how far it got, and what the receiver keeps for a resume.
///
/// "Kept" is said only where it is known. A receiver that cancels keeps its staged data for a resume (PROTOCOL.md
/// 11.10 rule 7), and what it verified of it the sender knows from its `stored` acknowledgements, so a sender told
/// by the receiver that it stopped says how much the receiver keeps. After a lost link no cancel came, and after
/// Ctrl-C or SIGTERM here the cancel may not have arrived: the sender says only what a ferry receiver does (the
/// reference receiver keeps what it verified). When this side ended the transfer otherwise (a protocol error), or
/// the receiver verified nothing, the plain failure is shown instead.
enum InterruptionText {
    /// A sender's account of a transfer that stopped: `the receiver shut down at 55.0 MiB of 200 MiB; it keeps them,
    /// send again to resume`; nil when there is nothing kept to speak of (then the failure is shown as it is).
    static func sending(_ stop: TransferStop?, failure: String, done: UInt64, total: UInt64, kept: UInt64) -> String? {
        guard let stop, kept > 0 else { return nil }
        let cause: String
        let keeps: String
        // Of what the receiver holds, files already published are not "kept for a resume": say which part is.
        let them = kept >= done ? "them" : "the \(TransferFormat.bytes(kept)) of the unfinished files"
        switch stop {
        case .cancelledByPeer(let reason):
            cause = senderCause(reason, failure: failure)
            keeps = "it keeps \(them), send again to resume"
        case .linkLost:
            cause = TerminalText.escape(failure)
            keeps = "a ferry receiver keeps what it verified, send again to resume"
        case .cancelledHere(let reason) where reason == .cancelledByUser || reason == .shuttingDown:
            // Ctrl-C or SIGTERM here: the cancel went to the receiver, which keeps what it verified (rule 7), unless
            // the link went first; said as what a ferry receiver does.
            cause = TerminalText.escape(failure)
            keeps = "a ferry receiver keeps what it verified, send again to resume"
        case .cancelledHere:
            return nil
        }
        return "\(cause) at \(TransferFormat.bytes(done)) of \(TransferFormat.bytes(total)); \(keeps)"
    }

    /// What the receiver's cancel means, from the sender's side: `the receiver shut down` (SIGTERM, a service
    /// stopped), `the receiver was stopped by its user` (Ctrl-C), else the failure as the engine says it.
    static func senderCause(_ reason: CancelReason, failure: String) -> String {
        switch reason {
        case .shuttingDown: "the receiver shut down"
        case .cancelledByUser: "the receiver was stopped by its user"
        case .diskFull: "the receiver's disk is full"
        default: TerminalText.escape(failure)
        }
    }

    /// A receiver's line for a transfer that stopped with verified data staged: `transfer from alice stopped
    /// (shutting down) at 55.0 MiB of 200 MiB; kept staged for a resume when alice sends again`; nil otherwise, and
    /// for a stop not meant to be resumed (this side ended it for a peer that broke the protocol, a full disk...):
    /// only a cancel by the sender, a lost link, or Ctrl-C or SIGTERM here.
    static func receiving(_ outcome: TransferOutcome) -> String? {
        guard outcome.direction == .receiving, let stop = outcome.stop, isForAResume(stop), outcome.keptBytes > 0,
            let failure = outcome.failure
        else { return nil }
        let name = TerminalText.escape(outcome.peer.displayName)
        let done = outcome.bytes &+ outcome.resumedBytes
        let what =
            outcome.keptBytes >= done ? "" : "the \(TransferFormat.bytes(outcome.keptBytes)) of the unfinished files "
        return "transfer from \(name) stopped (\(TerminalText.escape(failure))) at \(TransferFormat.bytes(done)) of "
            + "\(TransferFormat.bytes(outcome.acceptedBytes)); \(what)kept staged for a resume when \(name) sends again"
    }

    /// Whether `stop` leaves what was verified for a resume: a cancel by the peer, a lost link, or this side stopped
    /// by its user (Ctrl-C) or shut down (SIGTERM). Not a stop for another cause here (a protocol error, a read that
    /// failed, a full disk), after which a summary or the plain failure says what happened.
    static func isForAResume(_ stop: TransferStop) -> Bool {
        switch stop {
        case .cancelledByPeer, .linkLost: true
        case .cancelledHere(let reason): reason == .cancelledByUser || reason == .shuttingDown
        }
    }

    /// The files a transfer resumes part way (a resume offset above 0 and below the size: staged by an earlier,
    /// interrupted transfer), said when it starts. Sending: `resuming photo.jpg at 55.0 MiB of 200 MiB: r3 kept them
    /// from an earlier send`; receiving: `resuming photo.jpg from alice at 55.0 MiB of 200 MiB: kept staged here from
    /// an earlier transfer`; more than 3 files in one line: `resuming 4 files at 120 MiB of 400 MiB: ...`. Files
    /// answered at their size (staged whole, or held already) are said when they end. Empty when nothing resumes.
    static func resuming(
        files: [OfferedFile], accepted: [Bool], resumeOffsets: [UInt64], direction: TransferDirection, peer: String
    ) -> [String] {
        let resumed = files.indices.filter { index in
            index < accepted.count && index < resumeOffsets.count && accepted[index] && resumeOffsets[index] > 0
                && resumeOffsets[index] < files[index].size
        }
        guard !resumed.isEmpty else { return [] }
        let name = TerminalText.escape(peer)
        let from = direction == .sending ? "" : " from \(name)"
        let why =
            direction == .sending
            ? ": \(name) kept them from an earlier send" : ": kept staged here from an earlier transfer"
        func line(_ what: String, _ at: UInt64, _ size: UInt64) -> String {
            "resuming \(what)\(from) at \(TransferFormat.bytes(at)) of \(TransferFormat.bytes(size))\(why)"
        }
        guard resumed.count <= 3 else {
            let at = resumed.reduce(UInt64(0)) { $0 &+ resumeOffsets[$1] }
            let size = resumed.reduce(UInt64(0)) { $0 &+ files[$1].size }
            return [line("\(resumed.count) files", at, size)]
        }
        return resumed.map { line(TerminalText.escape(files[$0].path), resumeOffsets[$0], files[$0].size) }
    }

    /// After a resumed file's size in its line: `; 55.0 MiB of it resumed, not sent again`; empty when none was.
    static func resumedAside(_ outcome: FileOutcome) -> String {
        guard outcome.resumedBytes > 0, !outcome.alreadyThere else { return "" }
        return "; \(TransferFormat.bytes(outcome.resumedBytes)) of it resumed, not sent again"
    }
}
