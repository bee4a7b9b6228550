import FerryTestSupport
import Foundation

/// What the benches that move files share: deadlines, checking copies, sending with the real `ferry`, progress.
///
/// Why a protocol: `ferry-bench transfer` and `ferry-bench compare` run the same ferry transfers and check the same
/// copies; one implementation keeps their figures comparable (the same commands, the same checks).
protocol BenchRows {
    var scope: BenchScope { get }
}

extension BenchRows {
    /// A generous deadline for moving `bytes`: a minute plus 5 MB/s.
    func timeout(forBytes bytes: Int) -> Duration {
        .seconds(60 + bytes / 5_000_000)
    }

    /// Throws unless `copy` exists with the bytes of `original`: the same SHA-256 when `digest` (that of `original`)
    /// is given, else byte for byte (`cmp`, which reads both and hashes nothing).
    func verify(_ copy: URL, matches digest: String?, of original: URL, _ who: String) throws {
        guard FileManager.default.fileExists(atPath: copy.path) else {
            throw BenchFailure(
                "\(who): \(copy.lastPathComponent) did not appear in \(copy.deletingLastPathComponent().path)")
        }
        guard let digest else {
            let result = try FerryProcess.run("cmp", ["-s", "--", original.path, copy.path], timeout: .seconds(600))
            guard result.status == 0 else { throw BenchFailure("\(who): \(copy.path) differs from \(original.path)") }
            return
        }
        let copied = try TestFiles.sha256(ofFile: copy)
        guard copied == digest else {
            throw BenchFailure("\(who): \(copy.path) differs from \(original.path) (sha256 \(copied) != \(digest))")
        }
    }

    /// Throws unless every file of `tree` is in `copy` (flat or at its path) with the same bytes.
    func verifyTree(_ tree: [TreeFile], source: URL, copy: URL, _ who: String) throws {
        for file in tree {
            let original = source.appendingPathComponent(file.path)
            var copied = copy.appendingPathComponent(file.path)
            if !FileManager.default.fileExists(atPath: copied.path) {
                copied = copy.appendingPathComponent(original.lastPathComponent)
            }
            guard FileManager.default.contentsEqual(atPath: original.path, andPath: copied.path) else {
                throw BenchFailure("\(who): \(file.path) is missing or differs in \(copy.path)")
            }
        }
    }

    /// Sends `files` to one receiver on loopback, checks each arrived intact (by its digest when `digests` are given,
    /// else with `cmp`), deletes the copies.
    func ferryCopy(
        _ files: [URL], work: TemporaryDirectory, compress: String, digests: [String]? = nil,
        sendOptions: [String] = []
    ) throws -> FerryTransferRun.Result {
        let inbox = work.url.appendingPathComponent("inbox")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let bytes = try files.reduce(0) { try $0 + fileSize($1) }
        let result = try FerryTransferRun(
            scope: scope, home: work.url.appendingPathComponent("homes"), files: files,
            receivers: [.init(directory: inbox)], compress: compress, sendOptions: sendOptions,
            timeout: timeout(forBytes: bytes)
        ).run()
        for (index, file) in files.enumerated() {
            try verify(
                inbox.appendingPathComponent(file.lastPathComponent), matches: digests?[index], of: file, "ferry")
        }
        try FileManager.default.removeItem(at: inbox)
        return result
    }

    /// One broadcast of `source` to `receivers` receivers of one session on loopback, each copy checked and deleted.
    func broadcast(
        _ source: URL, digest: String?, receivers count: Int, work: TemporaryDirectory, sendOptions: [String] = []
    ) throws -> FerryTransferRun.Result {
        let inboxes = (0..<count).map { work.url.appendingPathComponent("inbox-\($0)") }
        for inbox in inboxes { try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true) }
        let result = try FerryTransferRun(
            scope: scope, home: work.url.appendingPathComponent("homes"), files: [source],
            receivers: inboxes.map { .init(directory: $0) }, broadcast: true, sendOptions: sendOptions,
            timeout: timeout(forBytes: try fileSize(source) * count)
        ).run()
        for inbox in inboxes {
            try verify(inbox.appendingPathComponent(source.lastPathComponent), matches: digest, of: source, "ferry")
            try FileManager.default.removeItem(at: inbox)
        }
        return result
    }

    func fileSize(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Says on stderr what a long row is doing, so a full-size run is not silent for minutes.
    func progress(_ row: String, _ text: String) {
        FileHandle.standardError.write(Data("  [\(row)] \(text)\n".utf8))
    }

    /// "1.00 GiB" / "256 MiB" / "12 KiB" for row names.
    func size(_ bytes: Int) -> String {
        if bytes >= 1 << 30 { return String(format: "%.2f GiB", Double(bytes) / Double(1 << 30)) }
        if bytes >= 1 << 20 { return String(format: "%.0f MiB", Double(bytes) / Double(1 << 20)) }
        return "\(bytes >> 10) KiB"
    }
}
