import FerrySession
import FerryTestSupport
import FerryWire
import Foundation

@testable import FerryTransfer

/// A test-only adapter on the receive path's seam for other protocols: attaches a foreign peer to an engine and
/// drives its steps as a LocalSend server would (offer, consent, the body in pieces, the file's end), keeping the
/// answers it gets. Not a LocalSend peer: the real ones are tested against the server (issue 29).
actor ForeignUploader {
    let peer: ForeignPeer
    private var answers: AsyncStream<TransferMessage>.AsyncIterator
    /// Every answer taken from `answers` so far, in order.
    private(set) var seen: [TransferMessage] = []
    /// Whether `answers` ended (the peer was detached).
    private(set) var detached = false

    init(engine: TransferEngine, name: String = "phone", trusted: Bool = false, protocolName: String = "localsend")
        async
    {
        let deviceID = DeviceID(bytes: SHA256Hasher.digest(Array("certificate of \(name)".utf8)))!
        peer = await engine.attachForeignPeer(
            ForeignPeerIdentity(deviceID: deviceID, displayName: name, isTrusted: trusted, protocolName: protocolName))
        answers = peer.answers.makeAsyncIterator()
    }

    /// Offers `files` and returns the transfer ID and the answer.
    func offer(_ files: [ForeignFile]) async -> (transferID: TransferID, reply: OfferReply?) {
        await peer.offer(files)
    }

    /// Sends `bytes` as file `file`'s body, cut into pieces of `pieces` bytes in turn (the last size repeats), then
    /// ends the file unless `end` is false.
    func upload(
        _ bytes: [UInt8], file: Int = 0, of transferID: TransferID, pieces: [Int] = [100_000], end: Bool = true
    ) async throws(ForeignPieceError) {
        var offset = 0
        var turn = 0
        while offset < bytes.count {
            let length = min(pieces[min(turn, pieces.count - 1)], bytes.count - offset)
            try await peer.write(bytes[offset..<offset + length], file: file, of: transferID)
            offset += length
            turn += 1
        }
        if end { try await peer.endFile(file, of: transferID) }
    }

    /// The next answer; nil once the peer is detached.
    func next() async -> TransferMessage? {
        var iterator = answers
        let message = await iterator.next(isolation: self)
        answers = iterator
        if let message { seen.append(message) } else { detached = true }
        return message
    }

    /// The `fileResult` of `file`, waiting for it; nil when the peer is detached first.
    func result(of file: Int, _ transferID: TransferID) async -> FileResult? {
        for case .fileResult(let result) in seen where result.transferID == transferID && result.fileIndex == file {
            return result
        }
        while let message = await next() {
            if case .fileResult(let result) = message, result.transferID == transferID, result.fileIndex == file {
                return result
            }
        }
        return nil
    }

    /// Reads answers until the peer is detached; returns the cancels among them.
    func untilDetached() async -> [TransferCancel] {
        while await next() != nil {}
        return seen.compactMap { if case .cancel(let cancel) = $0 { cancel } else { nil } }
    }
}
