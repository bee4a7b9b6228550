import Foundation
import Glibc

/// `ip netns` operations and running code on a thread inside a network namespace.
///
/// Why: the test bed builds, lists and removes namespaces with `ip`, and tests sometimes need a
/// socket that lives in a host's namespace; a thread that `setns`es and creates it gives one
/// without an extra helper binary (the socket stays in that namespace after the thread ends).
enum NetworkNamespace {
    static func ipPath() throws -> String {
        guard let path = ExecutableSearch.path(of: "ip") else {
            throw TestSupportError.binaryNotFound(
                name: "ip (package iproute2)", searched: ["PATH", "/usr/sbin", "/sbin"])
        }
        return path
    }

    /// Runs `ip [-n namespace] arguments`.
    static func ip(_ arguments: [String], namespace: String? = nil) throws -> CommandResult {
        let prefix = namespace.map { ["-n", $0] } ?? []
        return try FerryProcess.run(try ipPath(), prefix + arguments)
    }

    /// Runs `commands` through one `ip [-n namespace] -batch -`; throws on the first failure unless `force`.
    static func batch(_ commands: [String], namespace: String? = nil, force: Bool = false) throws {
        let prefix = (namespace.map { ["-n", $0] } ?? []) + (force ? ["-force"] : [])
        let result = try FerryProcess.run(
            try ipPath(), prefix + ["-batch", "-"],
            input: commands.joined(separator: "\n") + "\n")
        if !force { try result.requireSuccess() }
    }

    /// Names of all network namespaces.
    static func list() -> [String] {
        guard let result = try? ip(["netns", "list"]), result.status == 0 else { return [] }
        return result.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// PIDs of processes whose network namespace is `name`.
    static func pids(in name: String) -> [Int32] {
        guard let result = try? ip(["netns", "pids", name]), result.status == 0 else { return [] }
        return result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
    }

    /// SIGKILLs every process in the namespaces (never this process), then deletes them.
    static func remove(_ names: [String]) {
        let ownPID = getpid()
        for name in names {
            for pid in pids(in: name) where pid != ownPID && pid > 1 {
                _ = kill(pid, SIGKILL)
            }
        }
        try? batch(names.map { "netns delete \($0)" }, force: true)
    }

    /// Runs `body` on a new thread that has entered namespace `name`; returns its result.
    static func perform<T: Sendable>(in name: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Monitor<Result<T, any Error>?>(nil)
        let thread = Thread {
            let result: Result<T, any Error>
            var fd = open("/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
            if fd < 0 { fd = open("/var/run/netns/\(name)", O_RDONLY | O_CLOEXEC) }
            if fd < 0 {
                result = .failure(TestSupportError.systemCall("open(/run/netns/\(name))", errno: errno))
            } else if GNUCalls.enterNetworkNamespace(fd) != 0 {
                result = .failure(TestSupportError.systemCall("setns(\(name))", errno: errno))
                Descriptor.close(fd)
            } else {
                Descriptor.close(fd)
                result = Result { try body() }
            }
            outcome.withLock { $0 = result }
        }
        thread.name = "ferry-test-netns"
        thread.start()
        guard let result = outcome.wait(until: nil, { $0 }) else { preconditionFailure("wait without deadline") }
        return try result.get()
    }
}
