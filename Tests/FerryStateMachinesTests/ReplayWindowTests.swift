import FerryStateMachines
import Testing

@Suite("Replay window")
struct ReplayWindowTests {
    @Test func eachNumberIsFreshOnce() {
        var window = ReplayWindow()
        #expect(!window.isFresh(0))
        for sequence in UInt64(1)...200 {
            #expect(window.isFresh(sequence))
            window.record(sequence)
            #expect(!window.isFresh(sequence))
        }
        #expect(window.highest == 200)
    }

    @Test func reorderingWithinTheWindowIsAcceptedOnce() {
        var window = ReplayWindow()
        window.record(100)
        for sequence in stride(from: UInt64(99), through: 37, by: -1) {
            #expect(window.isFresh(sequence), "sequence \(sequence)")
            window.record(sequence)
            #expect(!window.isFresh(sequence))
        }
        #expect(!window.isFresh(36))  // 64 below the highest: too old to tell
        #expect(!window.isFresh(1))
        #expect(window.isFresh(101))
    }

    @Test func aLargeJumpForgetsTheOldWindow() {
        var window = ReplayWindow()
        for sequence in UInt64(1)...10 { window.record(sequence) }
        window.record(1_000)
        #expect(!window.isFresh(10))
        #expect(window.isFresh(999))
        #expect(!window.isFresh(1_000))
        window.record(UInt64.max)
        #expect(!window.isFresh(UInt64.max))
        #expect(window.isFresh(UInt64.max - 1))
    }

    @Test func checkingDoesNotRecord() {
        var window = ReplayWindow()
        #expect(window.isFresh(5))
        #expect(window.isFresh(5))
        window.record(5)
        #expect(!window.isFresh(5))
        #expect(window.isFresh(4))
    }

    @Test func randomOrderMatchesASetModel() {
        var window = ReplayWindow()
        var recorded = Set<UInt64>()
        var generator = SystemRandomNumberGenerator()
        var base: UInt64 = 1
        for _ in 0..<5_000 {
            let sequence = base + UInt64.random(in: 0..<80, using: &generator)
            base += UInt64.random(in: 0..<3, using: &generator)
            let tooOld = window.highest >= ReplayWindow.width && sequence <= window.highest - ReplayWindow.width
            let expected = !recorded.contains(sequence) && !tooOld
            #expect(window.isFresh(sequence) == expected)
            if window.isFresh(sequence) {
                window.record(sequence)
                recorded.insert(sequence)
            }
        }
    }
}
