import FerryWire
import Synchronization
import Testing

@testable import FerryCLI

/// The live bars: exactly which bytes reach the terminal.
@Suite struct ProgressBoardTests {
    static let a = ProgressBoard.Key(
        transferID: TransferID(bytes: [UInt8](repeating: 1, count: 16))!, peerID: .init(rawValue: 1))
    static let b = ProgressBoard.Key(
        transferID: TransferID(bytes: [UInt8](repeating: 1, count: 16))!, peerID: .init(rawValue: 2))

    static func line(_ name: String, _ done: UInt64) -> ProgressLine {
        ProgressLine(name: name, bytesDone: done, totalBytes: 100, rate: 0, secondsLeft: nil)
    }

    @Test func rowsAreRedrawnInPlaceWithMessagesAbove() {
        let sink = CapturingTextSink()
        let frozen = ContinuousClock.now  // an injected clock that never moves: no redraw is due to time
        let board = ProgressBoard(sink: sink, width: { 31 }, now: { frozen })
        board.update(Self.a, Self.line("alice", 0))
        #expect(sink.text == "alice               0%\n")
        board.update(Self.b, Self.line("bob", 50))
        let afterTwo =
            "alice               0%\n" + "\u{1B}[1F\u{1B}[J" + "alice               0%\nbob                50%\n"
        #expect(sink.text == afterTwo)
        board.remove(Self.a, printing: ["sent x to alice (1 B)"])
        #expect(sink.text == afterTwo + "\u{1B}[2F\u{1B}[J" + "sent x to alice (1 B)\nbob                50%\n")
        board.clear()
        #expect(sink.text.hasSuffix("bob                50%\n\u{1B}[1F\u{1B}[J"))
        // Nothing on screen and nothing to say: nothing is written.
        let before = sink.text
        board.clear()
        board.print([])
        #expect(sink.text == before)
    }

    /// Issue 28, 2: a line that says what the sender waits for stays below the bars until the peer's bar replaces
    /// it, or the answer removes it; the cursor moves by the lines really drawn.
    @Test func aNoteStaysUntilItsPeersBarReplacesIt() {
        let sink = CapturingTextSink()
        let frozen = ContinuousClock.now
        let board = ProgressBoard(sink: sink, width: { 31 }, now: { frozen })
        board.note(Self.a.peerID, "waiting for alice to accept... (a person asked there has 60 s)")
        #expect(sink.text == "waiting for alice to accept...\n", "cut to the width less one column")
        board.note(Self.b.peerID, "waiting for bob")
        let two =
            "waiting for alice to accept...\n" + "\u{1B}[1F\u{1B}[J"
            + "waiting for alice to accept...\nwaiting for bob\n"
        #expect(sink.text == two)
        board.update(Self.a, Self.line("alice", 0))
        let replaced = two + "\u{1B}[2F\u{1B}[J" + "alice               0%\nwaiting for bob\n"
        #expect(sink.text == replaced)
        board.removeNote(Self.b.peerID, printing: ["bob denied the transfer: no"])
        #expect(sink.text == replaced + "\u{1B}[2F\u{1B}[J" + "bob denied the transfer: no\nalice               0%\n")
    }

    @Test func progressAloneRedrawsAtMostTenTimesASecond() {
        let sink = CapturingTextSink()
        let start = ContinuousClock.now
        let clock = Mutex(start)
        let board = ProgressBoard(sink: sink, width: { 31 }, now: { clock.withLock { $0 } })
        board.update(Self.a, Self.line("alice", 0))
        let first = sink.text
        // 99 ms after a draw, an update of an existing row is kept for the next draw.
        clock.withLock { $0 = start + .milliseconds(99) }
        board.update(Self.a, Self.line("alice", 10))
        #expect(sink.text == first)
        // A message forces a redraw, which shows the kept update.
        board.print(["hello"])
        let afterMessage = first + "\u{1B}[1F\u{1B}[Jhello\nalice              10%\n"
        #expect(sink.text == afterMessage)
        // 100 ms after that draw, an update is drawn at once.
        clock.withLock { $0 = start + .milliseconds(199) }
        board.update(Self.a, Self.line("alice", 20))
        #expect(sink.text == afterMessage + "\u{1B}[1F\u{1B}[Jalice              20%\n")
    }

    /// Issue 9, 6: a bar with no progress for 10 s stayed as it was, with its old rate and time left. With no
    /// progress for 5 s the row says "stalled" and counts up on each tick; progress clears it.
    @Test func aRowWithoutProgressSaysItIsStalled() {
        let sink = CapturingTextSink()
        let start = ContinuousClock.now
        let clock = Mutex(start)
        let board = ProgressBoard(sink: sink, width: { 81 }, now: { clock.withLock { $0 } })
        let up = "\u{1B}[1F\u{1B}[J"
        let bar = "alice             [#................]   10%      10 B/100 B"
        board.update(Self.a, Self.line("alice", 10))
        #expect(sink.text == bar + "      -- B/s    --:--\n")
        clock.withLock { $0 = start + .seconds(4) }
        board.tick()
        #expect(sink.text == bar + "      -- B/s    --:--\n", "not stalled yet: no redraw")
        // An update without new bytes is no progress.
        clock.withLock { $0 = start + .seconds(5) }
        board.update(Self.a, Self.line("alice", 10))
        clock.withLock { $0 = start + .seconds(10) }
        board.tick()
        clock.withLock { $0 = start + .seconds(11) }
        board.tick()
        #expect(
            sink.text
                == bar + "      -- B/s    --:--\n" + up + bar + "           stalled 5s\n" + up + bar
                + "          stalled 10s\n"
                + up + bar + "          stalled 11s\n")
        // Progress: the note goes, and ticks draw nothing until the row stalls again.
        board.update(Self.a, Self.line("alice", 20))
        #expect(
            sink.text.hasSuffix(
                up + "alice             [###..............]   20%      20 B/100 B      -- B/s    --:--\n"))
        let after = sink.text
        clock.withLock { $0 = start + .seconds(15) }
        board.tick()
        #expect(sink.text == after)
        clock.withLock { $0 = start + .seconds(16) }
        board.tick()
        #expect(sink.text.hasSuffix("   20%      20 B/100 B           stalled 5s\n"))
    }
}
