import FerryStateMachines
import Testing

@testable import FerryCLI

/// Issue 13: `--accept` takes the same words where they mean the same: `all` accepts everyone, `trusted` only
/// pinned peers, in `receive` and in `chat`.
@Suite struct AcceptWordsTests {
    @Test func chatTakesTrustedAsReceiveDoes() throws {
        let chat = try #require(try parseCommand(["chat", "--accept", "trusted"]) as? ChatCommand)
        #expect(chat.accept == .trusted)
        #expect(ChatCommand.sessionPolicy(.trusted) == .trusted)
        #expect(ChatCommand.sessionPolicy(.all) == .all)
        #expect(ChatCommand.sessionPolicy(.none) == .none)
        let receive = try #require(try parseCommand(["receive", "--accept", "trusted"]) as? ReceiveCommand)
        #expect(receive.accept == .trusted)
    }

    /// Issue 28, 10: chat asks by default as receive does, and where nobody can answer (stdin no terminal) lets
    /// trusted peers in only, as receive accepts their offers only.
    @Test func chatAsksOnATerminalAndTakesTrustedPeersOnlyWithoutOne() throws {
        let chat = try #require(try parseCommand(["chat"]) as? ChatCommand)
        #expect(chat.accept == .ask)
        #expect(ChatCommand.gatePolicy(.ask, canAsk: true) == .ask)
        #expect(ChatCommand.gatePolicy(.ask, canAsk: false) == .trusted)
        #expect(ChatCommand.gatePolicy(.all, canAsk: false) == .all)
        #expect(ChatCommand.sessionPolicy(.ask) == .ask)
    }

    @Test func wordsSharedByReceiveAndChatMeanTheSame() {
        let receive = Set(ReceiveCommand.AcceptPolicy.allCases.map(\.rawValue))
        let chat = Set(ChatCommand.AcceptPolicy.allCases.map(\.rawValue))
        #expect(receive.intersection(chat) == ["ask", "all", "trusted"])
    }
}
