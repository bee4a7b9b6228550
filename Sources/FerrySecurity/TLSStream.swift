import FerrySystem
import FerryWire
import Synchronization

/// A ferry link's transport: the 8-byte preface in the clear, then TLS 1.3 with both sides' certificates, then
/// every byte of the session protocol inside TLS.
///
/// Wraps any `ByteStream` (a `TCPConnection` in ferry). The first `read` runs the handshake: it sends our preface,
/// checks the peer's (a stranger or another major version is refused before any TLS byte), then drives OpenSSL
/// until both sides are authenticated. Writes wait for the handshake, so the session can queue its hello at once.
/// Afterwards `peerDeviceID` is the SHA-256 of the peer's certificate, which the session compares with what the
/// peer announced.
///
/// Bounds before authentication: the preface is read 8 bytes at most, handshake input 16 KiB per read, and OpenSSL
/// refuses a certificate list above `TLSContext.maxCertificateListBytes`; the session's handshake deadline closes a
/// peer that stalls.
///
/// One reader and one writer at a time (the session has exactly one of each per link): a record encrypted by one
/// `write` is sent before the next `write` encrypts.
public final class TLSStream: ByteStream {
    /// Which side of the TLS handshake this is: the link's initiator is the client.
    public enum Role: Sendable {
        case client
        case server
    }

    /// Who the handshake authenticated.
    public struct Peer: Equatable, Sendable {
        /// SHA-256 of the certificate the peer presented.
        public var deviceID: DeviceID
        /// From the peer's preface.
        public var version: ProtocolVersion
        /// The negotiated cipher suite.
        public var cipher: String
        /// The key exchange group (always "X25519", PROTOCOL 3.1).
        public var group: String
        /// The algorithm the peer signed the handshake with (always "ED25519").
        public var signature: String
        /// When the handshake finished (monotonic clock).
        public var established: ContinuousClock.Instant
    }

    private let role: Role
    private let channel: TLSChannel<Peer>

    /// A TLS stream over `transport` as `role`; the handshake runs on the first read or write (or `handshake()`).
    public init(over transport: any ByteStream, context: TLSContext, role: Role) throws(SecurityError) {
        self.role = role
        channel = TLSChannel(over: transport, engine: try TLSEngine(context: context, isClient: role == .client))
    }

    /// The transport's local address.
    public var localAddress: SocketAddress { channel.transport.localAddress }
    /// The transport's remote address.
    public var remoteAddress: SocketAddress { channel.transport.remoteAddress }
    /// The transport's bytes not yet acknowledged by the peer (records, so slightly more than the plaintext).
    public var unacknowledgedBytes: Int? { channel.transport.unacknowledgedBytes }
    /// The transport's time limited by the peer's receive window.
    public var receiveWindowLimitedSeconds: Double? { channel.transport.receiveWindowLimitedSeconds }

    /// The authenticated peer; nil until the handshake finished.
    public var peer: Peer? { channel.peer }

    /// Runs the handshake (once; later calls wait for the first) and returns the authenticated peer.
    @discardableResult
    public func handshake() async throws -> Peer {
        try await channel.handshake { try await runHandshake() }
    }

    /// Decrypted bytes, at most `maxBytes` (positive); empty at the end of the stream. Runs the handshake first
    /// when it has not run yet.
    public func read(maxBytes: Int) async throws -> [UInt8] {
        precondition(maxBytes > 0, "read(maxBytes:) needs a positive maxBytes")
        try await handshake()
        return try await channel.read(maxBytes: maxBytes, inputLimit: Self.inputLimit)
    }

    /// Ciphertext read from the transport at a time.
    public static let inputLimit = 256 << 10

    /// Reads plaintext straight into `decoder` (the rest of a frame header, or of the payload array of the frame
    /// under way: no copy between OpenSSL and the frame the session gets) and returns the frames completed and the
    /// plaintext bytes taken; 0 bytes means the end of the stream.
    ///
    /// Takes everything the ciphertext read so far decrypts to, reading from the transport only when nothing is
    /// left, so a call costs one `recv` at most. Stops early at a frame header `decoder` refuses: it is still
    /// buffered there, and the next `nextFrame()` throws it (the caller may raise the limit first). Call only while
    /// `decoder.fillableByteCount` is positive, i.e. once `nextFrame()` returned nil.
    public func read(into decoder: inout FrameDecoder) async throws -> (frames: [Frame], byteCount: Int) {
        precondition(decoder.fillableByteCount > 0, "read(into:) with a frame waiting in the decoder")
        try await handshake()
        var frames: [Frame] = []
        while true {
            let (count, step) = channel.engine.withLock { engine in
                var total = 0
                var step = TLSEngine.Step.done
                while decoder.fillableByteCount > 0 {
                    let count = decoder.fill { space in
                        let (count, next) = engine.read(into: space)
                        step = next
                        return count
                    }
                    total += count
                    do {
                        while let frame = try decoder.nextFrame() { frames.append(frame) }
                    } catch {
                        break  // left for the caller: it may deliver `frames` and raise the limit first
                    }
                    if count == 0 { break }
                }
                return (total, step)
            }
            if count > 0 { return (frames, count) }
            switch step {
            case .done, .needInput:
                let input = try await channel.transport.read(maxBytes: Self.inputLimit)
                if input.isEmpty { return ([], 0) }
                channel.engine.withLock { $0.feed(input) }
            case .closed:
                return ([], 0)
            case .failed(let reason):
                throw SecurityError.connectionFailed(reason)
            }
        }
    }

    /// Plaintext encrypted and sent at a time: a large write goes out in slices, so the peer decrypts the first
    /// records while later ones are encrypted, and the output buffer stays small.
    static let writeSlice = 256 << 10

    /// Encrypts and sends `bytes`, suspending while the transport is full. Runs the handshake first when it has
    /// not run yet.
    public func write(_ bytes: [UInt8]) async throws {
        try await write(blocks: [bytes])
    }

    /// Encrypts `blocks` in order and sends the records in slices of `writeSlice` bytes of plaintext: a small block
    /// (a chunk's frame header) shares its send with what follows, and each block becomes records of its own, so no
    /// block is copied into another.
    public func write(blocks: [[UInt8]]) async throws {
        try await handshake()
        var block = 0
        var offset = 0
        repeat {
            var pieces: [ArraySlice<UInt8>] = []
            var budget = Self.writeSlice
            while budget > 0, block < blocks.count {
                let end = min(blocks[block].count, offset + budget)
                pieces.append(blocks[block][offset..<end])
                budget -= end - offset
                offset = end
                if offset == blocks[block].count {
                    block += 1
                    offset = 0
                }
            }
            try await channel.send(pieces)
        } while block < blocks.count
    }

    /// Sends a TLS close_notify, then shuts down the transport's write side: the peer reads the end of the stream
    /// (PROTOCOL.md 3.5) and may still write to us. Before the handshake finished only the transport is shut down.
    public func finishWriting() async {
        await channel.finishWriting()
    }

    /// Closes the transport at once, without a close_notify (see `finishWriting()` for an orderly end).
    public func close() {
        channel.close()
    }

    /// RFC 8446 exporter bytes bound to this link: both ends get the same bytes, a man in the middle (who holds two
    /// different TLS sessions) gets different ones. Nil before the handshake.
    public func exportKeyingMaterial(label: String, context: [UInt8], length: Int) -> [UInt8]? {
        guard peer != nil else { return nil }
        return channel.engine.withLock { $0.exportKeyingMaterial(label: label, context: context, length: length) }
    }

    private func runHandshake() async throws -> Peer {
        var preface: [UInt8] = []
        var version: ProtocolVersion?
        do {
            try await channel.transport.write(Preface.encode())
        } catch let error as CancellationError {
            throw error
        } catch {
            // Reset before we said anything: the peer refused the connection at once (PROTOCOL.md 10.6).
            throw SecurityError.closedBeforePreface
        }
        while version == nil {
            let bytes: [UInt8]
            do {
                bytes = try await channel.transport.read(maxBytes: Preface.length - preface.count)
            } catch let error as CancellationError {
                throw error
            } catch _ where preface.isEmpty {
                throw SecurityError.closedBeforePreface
            }
            guard !bytes.isEmpty else {
                throw preface.isEmpty ? SecurityError.closedBeforePreface : SecurityError.closedDuringHandshake
            }
            preface += bytes
            do {
                version = try Preface.decode(preface[...])
            } catch {
                throw SecurityError.badPreface(error.description)
            }
        }
        try await channel.driveHandshake()
        guard let certificate = channel.engine.withLock({ $0.peerCertificate() }) else {
            throw SecurityError.handshakeFailed("the peer presented no certificate")
        }
        let (cipher, group, signature) = channel.engine.withLock {
            ($0.cipherName(), $0.groupName(), $0.peerSignatureName())
        }
        return Peer(
            deviceID: DeviceIdentity.deviceID(ofCertificate: certificate), version: version ?? .current,
            cipher: cipher, group: group, signature: signature, established: .now)
    }
}
