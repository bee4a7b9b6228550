import Glibc

/// GNU-only calls that the Swift `Glibc` module does not export, looked up once with `dlsym`.
///
/// Why: the test support must not depend on the product's C shim (it is another team's module);
/// these four calls are what make descriptors close-on-exec atomically and enter namespaces.
enum GNUCalls {
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    private typealias Accept4 =
        @convention(c) (
            Int32, UnsafeMutablePointer<sockaddr>?,
            UnsafeMutablePointer<socklen_t>?, Int32
        ) -> Int32
    private typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private typealias ChangeDirectory =
        @convention(c) (
            UnsafeMutablePointer<posix_spawn_file_actions_t>?,
            UnsafePointer<CChar>?
        ) -> Int32

    // C function pointers are Sendable; each static let is resolved once, lazily and thread-safely.
    private static let pipe2Call = unsafeBitCast(dlsym(nil, "pipe2"), to: Pipe2?.self)
    private static let accept4Call = unsafeBitCast(dlsym(nil, "accept4"), to: Accept4?.self)
    private static let setnsCall = unsafeBitCast(dlsym(nil, "setns"), to: SetNamespace?.self)
    private static let closeFromCall = unsafeBitCast(
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np"), to: CloseFrom?.self)
    private static let chdirCall = unsafeBitCast(
        dlsym(nil, "posix_spawn_file_actions_addchdir_np"), to: ChangeDirectory?.self)

    /// `CLONE_NEWNET` from <sched.h> (GNU-only there).
    static let cloneNewNet: Int32 = 0x4000_0000

    /// A pipe whose both ends are close-on-exec (`pipe2(O_CLOEXEC)`).
    static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        let result = fds.withUnsafeMutableBufferPointer { buffer -> Int32 in
            if let pipe2Call { return pipe2Call(buffer.baseAddress, O_CLOEXEC) }
            let result = pipe(buffer.baseAddress)
            if result == 0 {
                _ = fcntl(buffer[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(buffer[1], F_SETFD, FD_CLOEXEC)
            }
            return result
        }
        guard result == 0 else { throw TestSupportError.systemCall("pipe2", errno: errno) }
        return (fds[0], fds[1])
    }

    /// `accept4(fd, nil, nil, SOCK_CLOEXEC)`, retried on EINTR; -1 with errno on failure.
    static func accept(_ fd: Int32) -> Int32 {
        while true {
            let result: Int32
            if let accept4Call {
                result = accept4Call(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            } else {
                result = Glibc.accept(fd, nil, nil)
                if result >= 0 { _ = fcntl(result, F_SETFD, FD_CLOEXEC) }
            }
            if result < 0 && errno == EINTR { continue }
            return result
        }
    }

    /// `setns(fd, CLONE_NEWNET)`: moves the calling thread into a network namespace.
    static func enterNetworkNamespace(_ fd: Int32) -> Int32 {
        guard let setnsCall else {
            errno = ENOSYS
            return -1
        }
        return setnsCall(fd, cloneNewNet)
    }

    /// Adds "close every descriptor from `lowest` up" to spawn actions; false if unsupported.
    static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Bool {
        guard let closeFromCall else { return false }
        return closeFromCall(actions, lowest) == 0
    }

    /// Adds a `chdir` to spawn actions; returns an errno value (0 on success).
    static func addChangeDirectory(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>,
        _ path: String
    ) -> Int32 {
        guard let chdirCall else { return ENOSYS }
        return chdirCall(actions, path)
    }
}
