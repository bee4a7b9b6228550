import FerryTestSupport
import Foundation
import Glibc

/// A one-connection inetd: the bench listens on a port, a client connects, and the daemon (`sshd -i`, `rsync
/// --daemon`) is started on that connection as its stdin and stdout, as inetd would start it.
///
/// Why: a daemon that forks a child per connection and reaps it itself gives no way to read the CPU time of one
/// transfer. Started per connection as the bench's own child, the daemon's `wait4` figures are exactly the server
/// end of that transfer, children (sshd's privilege-separated child, rsync's receiver and generator) included. The
/// daemon's start (reading its configuration and keys) is in the timing and the CPU, as it is in a forking daemon's
/// per-connection child.
struct InetdRun {
    var scope: BenchScope
    var timeout: Duration
    /// Where the daemon listens; with `bed` and `host`, inside that host's network namespace.
    var address = "127.0.0.1"
    var bed: TestBed?
    var daemonHost: TestHost?
    var clientNamespace: String?

    /// Listens, starts `client(port)`, accepts its connection, starts `daemon` on it; times from the client's start
    /// until both have exited. `daemonStatuses` are the exit statuses that mean success (`sshd -i` exits 255 when
    /// the client closes the connection).
    func run(
        _ what: String, daemon: [String], daemonStatuses: Set<Int32> = [0], client: (UInt16) -> [String]
    ) throws -> ContenderRun {
        let listener = try listen()
        defer { _ = close(listener.descriptor) }
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + timeout
        let command = client(listener.port)
        let client = try scope.start(command[0], Array(command.dropFirst()), namespace: clientNamespace)
        let connection = try accept(listener.descriptor, client: client, what: what, deadline: deadline)
        let server: FerryProcess
        do {
            defer { _ = close(connection) }
            server = try scope.start(
                daemon[0], Array(daemon.dropFirst()), namespace: daemonHost?.namespace, standardIO: connection)
        }
        var end = start
        for process in [client, server] {
            guard (try? process.waitForExit(timeout: max(deadline - clock.now, .seconds(1)))) != nil else {
                throw failure(what, "did not finish within \(timeout)", client, server)
            }
            end = max(end, clock.now)
        }
        guard client.exitStatus == 0, let status = server.exitStatus, daemonStatuses.contains(status) else {
            throw failure(what, "failed", client, server)
        }
        return ContenderRun(elapsed: end - start, sender: client.resourceUsage, receiver: server.resourceUsage)
    }

    /// A listening TCP socket on `address`, port 0 (in `daemonHost`'s namespace when given).
    private func listen() throws -> (descriptor: Int32, port: UInt16) {
        let address = self.address
        let open: @Sendable () throws -> (descriptor: Int32, port: UInt16) = {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw BenchFailure("socket failed: errno \(errno)") }
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else {
                _ = close(fd)
                throw BenchFailure("not an IPv4 address: \(address)")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = withUnsafeMutablePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && Glibc.listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard listening else {
                let error = errno
                _ = close(fd)
                throw BenchFailure("listening on \(address):0 failed: errno \(error)")
            }
            return (fd, UInt16(bigEndian: socketAddress.sin_port))
        }
        if let bed, let daemonHost { return try bed.perform(in: daemonHost, open) }
        return try open()
    }

    /// The client's connection, accepted (close-on-exec) before `deadline`; throws if the client exits first.
    private func accept(_ listener: Int32, client: FerryProcess, what: String, deadline: ContinuousClock.Instant)
        throws -> Int32
    {
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready > 0 {
                let connection = Glibc.accept(listener, nil, nil)
                guard connection >= 0 else { throw BenchFailure("\(what): accept failed: errno \(errno)") }
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                return connection
            }
            if ready < 0 && errno != EINTR { throw BenchFailure("\(what): poll failed: errno \(errno)") }
            if !client.isRunning { throw failure(what, "the client exited before it connected", client, nil) }
        }
        throw failure(what, "the client did not connect within \(timeout)", client, nil)
    }

    private func failure(_ what: String, _ problem: String, _ client: FerryProcess, _ server: FerryProcess?)
        -> BenchFailure
    {
        client.kill()
        server?.kill()
        func status(_ process: FerryProcess?) -> String {
            guard let process else { return "not started" }
            _ = try? process.waitForExit(timeout: .seconds(2))
            return process.exitStatus.map { "exit \($0)" } ?? "still running"
        }
        var message = "\(what) \(problem): client \(status(client)), daemon \(status(server))"
        message += client.allStderrLines.suffix(3).map { "\n  client| \($0)" }.joined()
        message += (server?.allStderrLines ?? []).suffix(3).map { "\n  daemon| \($0)" }.joined()
        return BenchFailure(message)
    }
}
