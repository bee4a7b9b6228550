import FerryTestSupport
import Testing

@testable import FerrySystem

/// Runs `body` with a fresh reactor and always shuts it down (closing every descriptor), also on failure.
func withReactor<Result>(_ body: (Reactor) async throws -> Result) async throws -> Result {
    let reactor = try Reactor()
    defer { reactor.shutdown() }
    return try await body(reactor)
}

/// Polls `condition` (yielding to the reactor's timer between checks) until it holds; fails after a generous
/// upper bound. Used to know that an operation is really suspended before closing or cancelling it.
func waitUntil(
    _ reactor: Reactor, _ what: Comment, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let giveUp = ContinuousClock.now + .seconds(60)
    while !condition() {
        guard ContinuousClock.now < giveUp else {
            Issue.record("timed out waiting: \(what)", sourceLocation: sourceLocation)
            throw ReactorError.timedOut
        }
        try await reactor.sleep(until: .now + .milliseconds(1))
    }
}

/// A listener on 127.0.0.1 with a kernel-chosen port.
func loopbackListener(_ reactor: Reactor, backlog: Int32 = 128) throws -> TCPListener {
    try reactor.listenTCP(on: .ipv4(.loopback, port: 0), backlog: backlog)
}

/// A connected pair over loopback: (client side, server side).
func connectedPair(_ reactor: Reactor) async throws -> (client: TCPConnection, server: TCPConnection) {
    let listener = try loopbackListener(reactor)
    defer { listener.close() }
    async let accepted = listener.accept()
    let client = try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(30))
    return (client, try await accepted)
}

/// Deterministic test bytes: the SplitMix64 stream of `seed`.
func patternBytes(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { generator.fill($0) }
    return bytes
}

/// Reads until the end of the stream.
func readToEnd(_ stream: some ByteStream, chunk: Int = 65536) async throws -> [UInt8] {
    var result: [UInt8] = []
    while true {
        let bytes = try await stream.read(maxBytes: chunk)
        if bytes.isEmpty { return result }
        result += bytes
    }
}
