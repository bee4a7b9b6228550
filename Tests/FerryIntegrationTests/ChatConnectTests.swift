import FerrySystem
import FerryTestSupport
import Foundation
import Testing

/// `ferry chat --peer HOST:PORT`: a connection that fails says why, naming the address once; a chat that ends while
/// its connection is still being made reports no failure.
extension IntegrationTests {
    @Suite(.serialized) struct ChatConnectTests {
        /// Nothing listens on the port: the chat says so and what to do, with the address once.
        @Test func aPortWithNothingListeningIsNamedOnceWithWhatToDo() throws {
            let harness = try ChatHarness()
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
            let port = listener.localAddress.port
            listener.close()  // free a moment ago: nothing listens there now
            let (chat, _) = try harness.chat("caller", ["--peer", "127.0.0.1:\(port)"])
            let error = try chat.nextJSON { $0["event"] as? String == "error" }
            let line = error["message"] as? String ?? "\(error)"
            #expect(
                line.contains("could not reach 127.0.0.1:\(port): nothing accepts connections on that port"),
                "\(line)")
            #expect(line.components(separatedBy: "127.0.0.1:\(port)").count == 2, "the address named once: \(line)")
            chat.closeStdin()
            #expect(try chat.waitForExit() == 0)
        }

        /// The peer takes the TCP connection and never answers (its handshake pending when the input ends): the chat
        /// ends at once and says nothing failed (it printed `could not reach ...: cancelled`, or a CancellationError).
        @Test func endingTheChatWhileItConnectsIsNoFailure() throws {
            let harness = try ChatHarness()
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            // Listening, never accepting: the kernel completes the connection, nobody speaks TLS on it.
            let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
            defer { listener.close() }
            let (chat, _) = try harness.chat("caller", ["--peer", "127.0.0.1:\(listener.localAddress.port)"])
            chat.closeStdin()
            #expect(try chat.waitForExit() == 0)
            let output = try chat.readAllStdout() + chat.readAllStderr()
            #expect(!output.contains("\"error\"") && !output.contains("Cancellation"), "\(output)")
        }
    }
}
