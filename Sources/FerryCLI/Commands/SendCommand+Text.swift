import FerryTransfer

/// `ferry send --text "..."`: a short text that the receiver prints (PROTOCOL.md 11.3, `text/x-ferry-message`).
extension SendCommand {
    /// Something must be sent: files, a text, or both; the text is not empty and fits one message.
    static func validateText(_ text: String?, files: [String]) throws(CLIError) {
        guard let text else {
            if files.isEmpty {
                throw .usage("Missing expected argument '<file> ...' (or a message with --text <text>)")
            }
            return
        }
        guard !text.isEmpty else { throw .usage("--text: the text must not be empty") }
        let bytes = text.utf8.count
        guard bytes <= Payload.maxMessageBytes else {
            throw .usage(
                "--text: the text is \(bytes) bytes, more than a message can carry (\(Payload.maxMessageBytes) bytes,"
                    + " 64 KiB); send it as a file instead")
        }
    }

    /// The files, then the text message (named `message.txt`, or a numbered name when a file takes that one).
    static func items(files: [SourceFile], text: String?) -> [TransferItem] {
        var items = files.map(TransferItem.file)
        guard let text else { return items }
        let taken = Set(files.map(\.name))
        var name = "message.txt"
        var number = 1
        while taken.contains(name) {
            name = "message (\(number)).txt"
            number += 1
        }
        items.append(.payload(.message(text, name: name)))
        return items
    }
}
