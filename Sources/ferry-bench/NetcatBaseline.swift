import FerryTestSupport
import Foundation

/// The baselines that need no ferry: one file through `nc`, and a tree through `tar c | nc` -> `nc | tar x`.
///
/// Why these: they are what a user would otherwise type, they touch the same disk, and they do no
/// hashing, framing or encryption, so they are the ceiling that ferry's figure is compared with.
/// Timed like ferry: from the sender's start until the listener (the receiving end) exits. Each end is one shell
/// (`/bin/sh -c`) that waits for its pipeline, so the shell's `wait4` figures are the CPU time of all its processes.
struct NetcatBaseline {
    var scope: BenchScope
    var timeout: Duration

    /// Copies `file` to `output` with `nc -d -l` on 127.0.0.1 (or `host` in `namespace`) and `nc -N`; with `sync`,
    /// the listener then runs `sync FILE` (an fsync of that file, as ferry does before it publishes).
    func copyFile(
        _ file: URL, to output: URL, host: String = "127.0.0.1", listenerNamespace: String? = nil,
        senderNamespace: String? = nil, sync: Bool = false
    ) throws -> ContenderRun {
        try run(
            listener: sync
                ? "nc -d -l \"$0\" \"$1\" > \"$2\" && exec sync -- \"$2\"" : "exec nc -d -l \"$0\" \"$1\" > \"$2\"",
            listenerArguments: [output.path],
            sender: "exec nc -N \"$0\" \"$1\" < \"$2\"", senderArguments: [file.path], host: host,
            listenerNamespace: listenerNamespace, senderNamespace: senderNamespace)
    }

    /// Copies the contents of directory `source` into directory `destination` with tar through nc; with `sync`, the
    /// listener then fsyncs every file it wrote (`find DIR -type f -exec sync -- {} +`), as ferry does.
    func copyTree(_ source: URL, to destination: URL, sync: Bool = false) throws -> ContenderRun {
        let unpack = "nc -d -l \"$0\" \"$1\" | tar x -C \"$2\""
        return try run(
            listener: sync ? unpack + " && exec find \"$2\" -type f -exec sync -- {} +" : unpack,
            listenerArguments: [destination.path],
            sender: "tar c -C \"$2\" . | nc -N \"$0\" \"$1\"", senderArguments: [source.path], host: "127.0.0.1",
            listenerNamespace: nil, senderNamespace: nil)
    }

    /// Starts the listener script (`$0` host, `$1` port, then `listenerArguments`), waits until it listens,
    /// starts the sender script, and times until the listener exits.
    private func run(
        listener: String, listenerArguments: [String], sender: String, senderArguments: [String], host: String,
        listenerNamespace: String?, senderNamespace: String?
    ) throws -> ContenderRun {
        guard ExecutableSearch.path(of: "nc") != nil else {
            throw BenchFailure("baseline failed: `nc` is missing (install netcat-openbsd)")
        }
        let port = listenerNamespace == nil ? try ListenerProbe.freeLoopbackPort() : 41_000
        let receiving = try scope.start(
            "/bin/sh", ["-c", listener, host, String(port)] + listenerArguments, namespace: listenerNamespace)
        try ListenerProbe.waitUntilListening(port: port, pid: receiving.pid)
        let clock = ContinuousClock()
        let start = clock.now
        let sending = try scope.start(
            "/bin/sh", ["-c", sender, host, String(port)] + senderArguments, namespace: senderNamespace)
        let status: Int32
        do {
            status = try receiving.waitForExit(timeout: timeout)
        } catch {
            throw BenchFailure("baseline failed: the nc listener did not finish within \(timeout)")
        }
        let elapsed = clock.now - start
        let senderStatus = (try? sending.waitForExit(timeout: .seconds(30))) ?? -1
        guard status == 0, senderStatus == 0 else {
            let output = (receiving.allStderrLines + sending.allStderrLines).suffix(4).joined(separator: "; ")
            throw BenchFailure(
                "baseline failed: listener exit \(status), sender exit \(senderStatus)"
                    + (output.isEmpty ? "" : ": \(output)"))
        }
        return ContenderRun(elapsed: elapsed, sender: sending.resourceUsage, receiver: receiving.resourceUsage)
    }
}
