import FerrySession
import FerryTransfer
import Foundation

/// Text messages (`ferry send --text`) as `ferry receive` shows them: the sender's name and the text, escaped.
extension TransferReporter {
    /// The text of a received message (PROTOCOL.md 11.3): an entry marked `text/x-ferry-message`, delivered in memory,
    /// at most 64 KiB. Invalid UTF-8 is shown with replacement characters. Nil for anything else.
    static func message(in outcome: FileOutcome) -> String? {
        guard outcome.direction == .receiving, outcome.failure == nil, let payload = outcome.payload,
            Payload.isMessage(outcome.mediaType, size: UInt64(payload.count))
        else { return nil }
        return String(decoding: payload, as: UTF8.self)
    }

    /// Prints a received message: a JSON `message` event, or `message from alice: text`. A text of several lines
    /// is shown under `message from alice:`, each line indented by two spaces. Every line is escaped, so a control
    /// character in it (an escape sequence, a CR) is shown, never obeyed, and no line can pass for ferry's own.
    func reportMessage(_ outcome: FileOutcome, text: String) {
        if json {
            var line = Self.header(.message, outcome.transferID, outcome.peer, direction: outcome.direction)
            line.append("text", .string(text))
            line.append("bytes", Self.int(outcome.size))
            line.append("keptAs", outcome.publishedName.map { .string($0) } ?? .null)
            emit(line)
            return
        }
        say(lines: Self.messageLines(outcome, text: text))
    }

    /// The lines `reportMessage` prints.
    static func messageLines(_ outcome: FileOutcome, text: String) -> [String] {
        let peer = TerminalText.escape(outcome.peer.displayName)
        let kept = outcome.publishedName.map { " (kept as \(TerminalText.escape($0)))" } ?? ""
        var body = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if body.count > 1, body.last == "" { body.removeLast() }
        if body.count == 1 { return ["message from \(peer)\(kept): \(TerminalText.escape(body[0]))"] }
        return ["message from \(peer)\(kept):"] + body.map { "  " + TerminalText.escape($0) }
    }
}
