import Foundation

/// Waiting for and reading the child's output lines.
extension FerryProcess {
    /// Every stdout line captured so far, including lines skipped by `waitForLine`.
    public var allStdoutLines: [String] { stdout.allLines }

    /// Every stderr line captured so far.
    public var allStderrLines: [String] { stderr.allLines }

    /// The next unread stdout line; throws with the captured output on timeout or end of output.
    public func nextLine(timeout: Duration = .seconds(30)) throws -> String {
        try next(from: stdout, until: .after(timeout), waitingFor: "a line on stdout")
    }

    /// The next unread stdout line matching `predicate`; non-matching lines are skipped.
    public func waitForLine(timeout: Duration = .seconds(30), where predicate: (String) -> Bool) throws -> String {
        let deadline = Deadline.after(timeout)
        while true {
            let line = try next(from: stdout, until: deadline, waitingFor: "a matching line on stdout")
            if predicate(line) { return line }
        }
    }

    /// The next unread stderr line.
    public func nextErrorLine(timeout: Duration = .seconds(30)) throws -> String {
        try next(from: stderr, until: .after(timeout), waitingFor: "a line on stderr")
    }

    /// The next unread stderr line matching `predicate`; non-matching lines are skipped.
    public func waitForErrorLine(timeout: Duration = .seconds(30), where predicate: (String) -> Bool) throws
        -> String
    {
        let deadline = Deadline.after(timeout)
        while true {
            let line = try next(from: stderr, until: deadline, waitingFor: "a matching line on stderr")
            if predicate(line) { return line }
        }
    }

    /// The next stdout line that is a JSON object matching `predicate`; other lines are skipped.
    public func nextJSON(
        timeout: Duration = .seconds(30),
        where predicate: ([String: Any]) -> Bool = { _ in true }
    ) throws -> [String: Any] {
        let deadline = Deadline.after(timeout)
        while true {
            let line = try next(from: stdout, until: deadline, waitingFor: "a matching JSON object on stdout")
            guard let data = line.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { continue }
            if predicate(object) { return object }
        }
    }

    /// Waits until stdout is closed and returns all of it, lines joined by newlines.
    public func readAllStdout(timeout: Duration = .seconds(30)) throws -> String {
        guard stdout.waitFinished(until: .after(timeout)) else {
            throw TestSupportError.timedOut(
                waitingFor: "end of stdout", process: description,
                captured: capturedOutput())
        }
        return stdout.allLines.joined(separator: "\n")
    }

    /// Waits until stderr is closed and returns all of it, lines joined by newlines.
    public func readAllStderr(timeout: Duration = .seconds(30)) throws -> String {
        guard stderr.waitFinished(until: .after(timeout)) else {
            throw TestSupportError.timedOut(
                waitingFor: "end of stderr", process: description,
                captured: capturedOutput())
        }
        return stderr.allLines.joined(separator: "\n")
    }

    /// What the child printed so far (stdout tail and stderr tail) and its exit status, for messages.
    public func capturedOutput(stdoutLines: Int = 60, stderrLines: Int = 30) -> String {
        func section(_ name: String, _ lines: [String], _ limit: Int) -> String {
            let shown = lines.suffix(limit)
            let header = "\(name) (\(lines.count) lines\(lines.count > limit ? ", last \(limit) shown" : "")):"
            return ([header] + shown.map { "  | " + $0 }).joined(separator: "\n")
        }
        let status = exitStatus.map { "exit status \($0)" } ?? "still running"
        return [
            section("stdout", allStdoutLines, stdoutLines), section("stderr", allStderrLines, stderrLines),
            status,
        ].joined(separator: "\n")
    }

    private func next(from capture: OutputCapture, until deadline: Deadline, waitingFor what: String) throws
        -> String
    {
        switch capture.next(until: deadline) {
        case .line(let line):
            return line
        case .endOfOutput:
            _ = exit.wait(until: .after(.seconds(2))) { $0.status }  // so the message shows the exit status
            throw TestSupportError.endOfOutput(waitingFor: what, process: description, captured: capturedOutput())
        case .timedOut:
            throw TestSupportError.timedOut(waitingFor: what, process: description, captured: capturedOutput())
        }
    }
}
