import Foundation
import Glibc

/// Which way a rate limit applies, seen from the host.
public enum LinkDirection: Sendable {
    /// What the host sends: shaped on the host's `eth0`.
    case outgoing
    /// What the host receives: shaped on the bridge port facing the host.
    case incoming
}

extension TestBed {
    /// Runs a short command (`args[0]` is the executable) inside `host`'s namespace.
    public func run(host: TestHost, _ args: [String], timeout: Duration = .seconds(60)) throws -> CommandResult {
        precondition(!args.isEmpty, "run needs a command")
        return try FerryProcess.run(args[0], Array(args.dropFirst()), namespace: host.namespace, timeout: timeout)
    }

    /// Starts a long-running process inside `host`'s namespace.
    public func start(
        on host: TestHost, executable: String, arguments: [String] = [],
        environment: [String: String] = [:], currentDirectory: URL? = nil
    ) throws -> FerryProcess {
        try FerryProcess(
            executable: executable, arguments: arguments, environment: environment,
            namespace: host.namespace, currentDirectory: currentDirectory)
    }

    /// Starts the built `ferry` inside `host`'s namespace.
    public func startFerry(
        on host: TestHost, _ arguments: [String], environment: [String: String] = [:],
        currentDirectory: URL? = nil
    ) throws -> FerryProcess {
        try FerryProcess.ferry(
            arguments, environment: environment, namespace: host.namespace,
            currentDirectory: currentDirectory)
    }

    /// Runs `body` on a thread inside `host`'s namespace: sockets it creates live in that namespace.
    public func perform<T: Sendable>(in host: TestHost, _ body: @escaping @Sendable () throws -> T) throws -> T {
        try NetworkNamespace.perform(in: host.namespace, body)
    }

    /// Shapes `host`'s link with a token bucket (`tc qdisc replace ... root tbf`).
    ///
    /// - Parameters:
    ///   - mbit: rate in megabits per second.
    ///   - burstKiB: bucket size in KiB (at least rate / HZ; 32 is fine up to about 100 mbit).
    ///   - latency: how long a packet may wait in the queue before it is dropped.
    ///   - direction: `.outgoing` shapes the host's eth0, `.incoming` the bridge port towards it.
    public func limitRate(
        host: TestHost, mbit: Int, burstKiB: Int, latency: Duration = .milliseconds(400),
        direction: LinkDirection = .outgoing
    ) throws {
        precondition(mbit > 0 && burstKiB > 0, "rate and burst must be positive")
        guard let tc = ExecutableSearch.path(of: "tc") else {
            throw TestSupportError.binaryNotFound(
                name: "tc (package iproute2)", searched: ["PATH", "/usr/sbin", "/sbin"])
        }
        let milliseconds = max(
            1, latency.components.seconds * 1000 + latency.components.attoseconds / 1_000_000_000_000_000)
        let (namespace, device) =
            direction == .outgoing
            ? (host.namespace, host.interface) : (switchNamespace, "p\(host.index)")
        try FerryProcess.run(
            tc,
            [
                "qdisc", "replace", "dev", device, "root", "tbf", "rate", "\(mbit)mbit",
                "burst", "\(burstKiB)kb", "latency", "\(milliseconds)ms",
            ], namespace: namespace
        )
        .requireSuccess()
    }

    /// Removes a rate limit set by `limitRate`.
    public func removeRateLimit(host: TestHost, direction: LinkDirection = .outgoing) throws {
        guard let tc = ExecutableSearch.path(of: "tc") else { return }
        let (namespace, device) =
            direction == .outgoing
            ? (host.namespace, host.interface) : (switchNamespace, "p\(host.index)")
        try FerryProcess.run(tc, ["qdisc", "del", "dev", device, "root"], namespace: namespace).requireSuccess()
    }
}
