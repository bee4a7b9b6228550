import Foundation
import Glibc

/// The shared state and the threads of a `FaultProxy`.
///
/// Why apart from `FaultProxy`: the threads hold this core, not the proxy, so dropping the proxy
/// runs its `deinit`, which closes everything and waits for the threads to end.
final class ProxyCore: Sendable {
    struct Connection: Sendable {
        var client: Int32
        var upstream: Int32?
        var pumpsLeft: Int
    }

    struct State: Sendable {
        var mode: FaultProxy.Mode
        var closed = false
        var accepted = 0
        var threads = 0
        var nextID = 0
        var connections: [Int: Connection] = [:]
    }

    private enum Step {
        case forward(FaultProxy.Mode)
        case closed
    }

    let state: Monitor<State>
    private let listener: Int32
    private let target: SocketAddress

    init(listener: Int32, target: SocketAddress, mode: FaultProxy.Mode) {
        self.listener = listener
        self.target = target
        state = Monitor(State(mode: mode))
    }

    func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.threads += 1 }
        let thread = Thread { [self] in
            body()
            state.withLock { $0.threads -= 1 }
        }
        thread.name = name
        thread.start()
    }

    func acceptLoop() {
        while true {
            let client = GNUCalls.accept(listener)
            if client < 0 {
                if errno == ECONNABORTED && !state.withLock({ $0.closed }) { continue }
                return
            }
            SocketAddress.disableNagle(client)
            let mode = state.withLock { state in
                state.accepted += 1
                return state.mode
            }
            let upstream: Int32?
            if mode == .blackHole {
                upstream = nil
            } else {
                let fd = target.connect()
                guard fd >= 0 else {
                    Descriptor.close(client)  // the client sees the connection closed, as with a dead target
                    continue
                }
                upstream = fd
            }
            let id: Int? = state.withLock { state in
                guard !state.closed else { return nil }
                let id = state.nextID
                state.nextID += 1
                state.connections[id] = Connection(
                    client: client, upstream: upstream, pumpsLeft: upstream == nil ? 1 : 2)
                return id
            }
            guard let id else {
                Descriptor.close(client)
                upstream.map(Descriptor.close)
                return
            }
            startThread(name: "ferry-proxy-up") { self.pump(id, from: client, to: upstream, .clientToServer) }
            if let upstream {
                startThread(name: "ferry-proxy-down") { self.pump(id, from: upstream, to: client, .serverToClient) }
            }
        }
    }

    /// Relays one stream until end of file, an error, a fault that ends it, or `shutDown`.
    private func pump(_ id: Int, from source: Int32, to destination: Int32?, _ direction: FaultProxy.Direction) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
        defer {
            buffer.deallocate()
            finish(id)
        }
        var forwarded = 0
        while true {
            let count = Descriptor.read(source, into: buffer)
            if count == 0, let destination {
                _ = shutdown(destination, Int32(SHUT_WR))  // pass the end of the stream on
                return
            }
            guard count > 0 else { return abort(id) }
            let step = state.wait(until: nil) { state -> Step? in
                if state.closed { return .closed }
                return state.mode == .stall ? nil : .forward(state.mode)
            }
            guard case .forward(let mode) = step, let destination else {
                if case .closed = step { return }
                continue  // black-hole connection: discard
            }
            var length = count
            var limit: Int?
            switch mode {
            case .pass, .stall:
                break
            case .delay(let duration):
                if state.wait(until: .after(duration), { $0.closed ? true : nil }) != nil { return }
            case .delayOneWay(let duration, let delayed) where delayed.includes(direction):
                if state.wait(until: .after(duration), { $0.closed ? true : nil }) != nil { return }
            case .delayOneWay:
                break
            case .blackHole:
                continue
            case .truncate(let afterBytes, let faulted) where faulted.includes(direction):
                limit = max(0, afterBytes)
                length = min(count, max(0, afterBytes - forwarded))
            case .flipBits(let every, let faulted) where faulted.includes(direction) && every > 0:
                var index = every - 1 - forwarded % every
                while index < count {
                    buffer[index] ^= 0x01
                    index += every
                }
            case .flipBitsAt(let offsets, let faulted) where faulted.includes(direction):
                for offset in offsets where offset >= forwarded && offset - forwarded < count {
                    buffer[offset - forwarded] ^= 0x01
                }
            case .truncate, .flipBits, .flipBitsAt:
                break
            }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<length])
            guard Descriptor.writeAll(destination, chunk, socket: true) else { return abort(id) }
            forwarded += length
            if let limit, forwarded >= limit { return abort(id) }
        }
    }

    /// Shuts both sockets of a connection down; its pumps then end and the last one closes them.
    private func abort(_ id: Int) {
        state.withLock { state in
            guard let connection = state.connections[id] else { return }
            _ = shutdown(connection.client, Int32(SHUT_RDWR))
            if let upstream = connection.upstream { _ = shutdown(upstream, Int32(SHUT_RDWR)) }
        }
    }

    private func finish(_ id: Int) {
        state.withLock { state in
            guard var connection = state.connections[id] else { return }
            connection.pumpsLeft -= 1
            if connection.pumpsLeft > 0 {
                state.connections[id] = connection
                return
            }
            state.connections[id] = nil
            Descriptor.close(connection.client)
            connection.upstream.map(Descriptor.close)
        }
    }

    /// Stops accepting, shuts every connection down and waits for all threads; idempotent.
    func shutDown() {
        let first = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            _ = shutdown(listener, Int32(SHUT_RDWR))  // wakes the blocked accept
            for connection in state.connections.values {
                _ = shutdown(connection.client, Int32(SHUT_RDWR))
                if let upstream = connection.upstream { _ = shutdown(upstream, Int32(SHUT_RDWR)) }
            }
            return true
        }
        let done = state.wait(until: .after(.seconds(30))) { $0.threads == 0 ? true : nil } ?? false
        if first && done { Descriptor.close(listener) }
    }
}
