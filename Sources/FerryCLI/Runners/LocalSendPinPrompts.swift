import Glibc

/// The PIN prompts of one command, one at a time: a send's, shared by all its LocalSend receivers (they are sent to
/// at once, so several may ask together; each prompt names its receiver), and `receive --ask-pin`'s two. A line typed
/// answers the prompt on the screen and no other (`StandardInputLines.stream()` ends the stream before it: two
/// readers at once would take each other's lines). The terminal's settings are saved before the first prompt and
/// restored after each (echo off only while one is read), so overlapping prompts cannot leave echo off. A send's
/// prompt is a line of the reporter's (said around the progress board, which would otherwise redraw over it).
actor LocalSendPinPrompts {
    private let say: @Sendable (String) -> Void
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// The terminal's settings before the first prompt; nil until then, or when stdin is no terminal.
    private var saved: termios?
    private var looked = false

    init(say: @escaping @Sendable (String) -> Void) {
        self.say = say
    }

    /// Shows `prompt` once no other prompt is open, and reads one line without echo; nil at end of input or when
    /// cancelled.
    func ask(_ prompt: String) async -> String? {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        }
        busy = true
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        guard !Task.isCancelled else { return nil }
        if !looked {
            looked = true
            var settings = termios()
            if tcgetattr(STDIN_FILENO, &settings) == 0 { saved = settings }
        }
        say(prompt)
        if var quiet = saved {
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        defer {
            if var saved { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        }
        for await line in StandardInputLines.stream() { return line.trimmingSpaces }
        return nil
    }
}
