import FerryTestSupport
import Testing

@testable import FerryTransfer

/// The window of a peer sent compressed by `auto` (`TransferEngine.window(_:compressing:peers:)`).
@Suite struct CompressedWindowTests {
    /// One peer that `auto` compresses for (a link that is not loopback) gets three times the configured window, so the
    /// pump runs ahead through highly compressible data while the link drains the bytes before; a loopback peer
    /// (sent raw: mode `none`), a forced mode and a broadcast keep the configured one.
    @Test func onePeerCompressedByAutoGetsThreeTimesTheWindow() {
        let configuration = TransferConfiguration()
        #expect(TransferEngine.window(configuration, compressing: true, peers: 1) == 3 * configuration.window)
        #expect(TransferEngine.window(configuration, compressing: false, peers: 1) == configuration.window)
        #expect(TransferEngine.window(configuration, compressing: true, peers: 3) == configuration.window)
    }
}
