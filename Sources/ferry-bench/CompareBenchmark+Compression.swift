import FerryTestSupport
import Foundation

/// Rows 3, 4 and 5: `--compress auto` on loopback and over a slow link, and broadcast.
extension CompareBenchmark {
    /// The shaped link's rate, both ways.
    static let linkMbit = 100

    /// 3. ferry --compress auto on loopback: text against random bytes of the same size.
    func rowThree() throws -> Row {
        let bytes = options.scaled(512 << 20)
        let work = try scope.directory("ferry-compare-3")
        progress("3", "writing \(size(bytes)) of text and \(size(bytes)) of random bytes")
        let files = TestFiles(in: work)
        let text = try files.text("text/text.txt", size: bytes, seed: 2)
        let random = try files.random("random/random.bin", size: bytes, seed: 3)
        var row = Row(
            number: "3", title: "ferry --compress auto over loopback, \(size(bytes)): text and random", bytes: bytes)
        row.contenders = [
            Contender("ferry, text", .ferry) {
                ContenderRun(ferry: try ferryCopy([text], work: work, compress: "auto"))
            },
            Contender("ferry, random", .ferry) {
                ContenderRun(ferry: try ferryCopy([random], work: work, compress: "auto"))
            },
        ]
        row.targets = { results in
            let text = CompareReport.result("ferry, text", in: results)
            let random = CompareReport.result("ferry, random", in: results)
            return [
                TargetCheck(
                    text: "throughput, text / random", value: TargetCheck.ratio(text?.rate, random?.rate), bound: 0.9,
                    atMost: false),
                TargetCheck.peakRSS(results),
            ]
        }
        return row
    }

    /// 4. --compress auto over a 100 Mbit/s link (tc tbf on both hosts' eth0, between two namespaces) on a tar of
    /// /usr/include: ferry against rsync -z (zstd level 3) and scp -C.
    func rowFour() throws -> Row {
        var row = Row(
            number: "4", title: "--compress auto over a \(Self.linkMbit) Mbit/s link, a tar of /usr/include", bytes: 0)
        guard TestBed.isAvailable.available else {
            row.skipReason = "network namespaces unavailable: \(TestBed.isAvailable.reason)"
            return row
        }
        let work = try scope.directory("ferry-compare-4")
        progress("4", "tar of /usr/include; two namespaces, \(Self.linkMbit) Mbit/s token bucket both ways")
        let source = work.url.appendingPathComponent("source/include.tar")
        try FileManager.default.createDirectory(
            at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FerryProcess.run(
            "tar", ["cf", source.path, "--sort=name", "-C", "/usr", "include"], timeout: .seconds(300)
        )
        .requireSuccess()
        let full = try fileSize(source)
        let bytes = min(full, options.scaled(full))
        if bytes < full {
            let handle = try FileHandle(forWritingTo: source)
            try handle.truncate(atOffset: UInt64(bytes))
            try handle.close()
        }
        row.bytes = bytes
        row.title += " (\(size(bytes))\(bytes < full ? ", its first part" : ""))"
        let bed = try scope.bed(hosts: 2, name: "compare")
        let (sender, receiver) = (bed.hosts[0], bed.hosts[1])
        for host in bed.hosts { try bed.limitRate(host: host, mbit: Self.linkMbit, burstKiB: 64) }
        let copies = work.url.appendingPathComponent("copies")
        try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
        let copy = copies.appendingPathComponent(source.lastPathComponent)
        let timeout = Duration.seconds(60 + bytes / 1_000_000)
        func checked(_ who: String, _ run: ContenderRun) throws -> ContenderRun {
            try verify(copy, matches: nil, of: source, who)
            try FileManager.default.removeItem(at: copy)
            return run
        }
        let inetd = InetdRun(
            scope: scope, timeout: timeout, address: receiver.address, bed: bed, daemonHost: receiver,
            clientNamespace: sender.namespace)
        let (ssh, rsync) = try daemonBaselines(in: work.url, destination: copies)
        let rsyncName = RsyncDaemonBaseline.compressOptions.text
        row.contenders = [
            Contender("ferry --compress auto", .ferry) {
                try checked(
                    "ferry",
                    ContenderRun(
                        ferry: try FerryTransferRun(
                            scope: scope, home: work.url.appendingPathComponent("homes"), files: [source],
                            receivers: [
                                .init(
                                    directory: copies, namespace: receiver.namespace, interface: receiver.interface,
                                    host: receiver.address)
                            ], senderNamespace: sender.namespace, senderInterface: sender.interface, timeout: timeout
                        ).run()))
            },
            Contender(rsyncName, .baseline, skipReason: RsyncDaemonBaseline.unavailable) {
                let rsync = try rsync.orThrow("rsync")
                return try checked(
                    "rsync -z",
                    inetd.run("rsync -z", daemon: rsync.daemon) {
                        rsync.client(
                            port: $0, host: receiver.address, sources: [source.path],
                            options: RsyncDaemonBaseline.compressOptions.options)
                    })
            },
            Contender("scp -C (aes128-gcm, into sshd -i)", .baseline, skipReason: SecureCopyBaseline.unavailable) {
                let ssh = try ssh.orThrow("scp")
                return try checked(
                    "scp -C",
                    inetd.run("scp -C", daemon: ssh.daemon, daemonStatuses: [0, 255]) {
                        ssh.client(
                            port: $0, host: receiver.address, sources: [source.path], destination: copy, compress: true)
                    })
            },
        ]
        let link = Double(Self.linkMbit) * 1e6 / 8
        row.notes = { results in
            let multiples = results.filter(\.measured).compactMap { result in
                result.rate.map { String(format: "%@ %.1fx", result.name, $0 / link) }
            }
            return [
                String(format: "the link: %.1f MB/s; effective throughput as a multiple of it: ", link / 1e6)
                    + multiples.joined(separator: ", ")
            ] + CompareReport.against("ferry --compress auto", results)
        }
        row.targets = { results in
            let ferry = CompareReport.result("ferry --compress auto", in: results)
            let rsync = CompareReport.result(rsyncName, in: results)
            return [
                TargetCheck(
                    text: "throughput, ferry / \(rsyncName)", value: TargetCheck.ratio(ferry?.rate, rsync?.rate),
                    bound: 1, atMost: false),
                TargetCheck.peakRSS(results),
            ]
        }
        return row
    }

    /// 5. Broadcast of 256 MiB on loopback to 4 receivers against 1: the sender's CPU seconds.
    func rowFive() throws -> Row {
        let bytes = options.scaled(256 << 20)
        let work = try scope.directory("ferry-compare-5")
        progress("5", "writing \(size(bytes)) of random bytes")
        let source = try TestFiles(in: work).random("source/random.bin", size: bytes, seed: 5)
        var row = Row(
            number: "5", title: "broadcast of \(size(bytes)) over loopback to 4 receivers and to 1", bytes: bytes)
        // Each pair alike: the file's digests kept from an earlier send (the warm-up's), and hashed again
        // (`--rehash`, a first send). Keeping them takes the same hashing off both, so it raises the ratio.
        row.contenders = [[], ["--rehash"]].flatMap { options in
            [1, 4].map { count in
                Contender(Self.broadcastName(count, options), .ferry) {
                    ContenderRun(
                        ferry: try broadcast(
                            source, digest: nil, receivers: count, work: work, sendOptions: options))
                }
            }
        }
        row.notes = { results in
            let seconds = results.filter(\.measured).compactMap { result in
                result.senderSeconds.map { String(format: "%@ %.2f s", result.name, $0) }
            }
            let splits = [[], ["--rehash"]].map { options in
                let one = CompareReport.result(Self.broadcastName(1, options), in: results)
                let four = CompareReport.result(Self.broadcastName(4, options), in: results)
                return String(
                    format:
                        "%@sender user %.2f s vs %.2f s (%.2fx), system %.2f s vs %.2f s (%.2fx), 4 receivers vs 1.",
                    options.isEmpty ? "" : "--rehash: ", four?.senderUserSeconds ?? .nan,
                    one?.senderUserSeconds ?? .nan,
                    TargetCheck.ratio(four?.senderUserSeconds, one?.senderUserSeconds) ?? .nan,
                    four?.senderSystemSeconds ?? .nan, one?.senderSystemSeconds ?? .nan,
                    TargetCheck.ratio(four?.senderSystemSeconds, one?.senderSystemSeconds) ?? .nan)
            }
            return [
                "recv is per receiver. Sender CPU seconds per broadcast: " + seconds.joined(separator: ", ") + ";"
            ] + splits + [
                "On loopback the kernel runs much of each receiving socket's work in the sender's system time.",
                "ferry: the file's chunk digests kept from an earlier send; ferry --rehash: hashed, as on a first "
                    + "send.",
            ]
        }
        row.targets = { results in
            [[], ["--rehash"]].map { options in
                let one = CompareReport.result(Self.broadcastName(1, options), in: results)
                let four = CompareReport.result(Self.broadcastName(4, options), in: results)
                return TargetCheck(
                    text: "sender CPU, 4 receivers / 1\(options.isEmpty ? "" : " (--rehash)")",
                    value: TargetCheck.ratio(four?.senderSeconds, one?.senderSeconds),
                    bound: 1.75, atMost: true)
            } + [TargetCheck.peakRSS(results)]
        }
        return row
    }

    /// "ferry to 4 receivers", "ferry --rehash to 1 receiver".
    static func broadcastName(_ count: Int, _ options: [String]) -> String {
        "ferry\(options.map { " " + $0 }.joined()) to \(count) receiver\(count == 1 ? "" : "s")"
    }
}
