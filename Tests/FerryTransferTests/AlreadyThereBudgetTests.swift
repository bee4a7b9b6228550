import FerryWire
import Testing

@testable import FerryTransfer

/// `AlreadyThereBudget` (review of issue 28, 1): what one sender may have hashed to find files held already is a
/// bucket per device that fills again over its window, not a fresh limit per offer.
@Suite struct AlreadyThereBudgetTests {
    static func device(_ byte: UInt8) -> DeviceID {
        DeviceID(bytes: [byte] + [UInt8](repeating: 0, count: DeviceID.length - 1))!
    }

    @Test func aSenderSpendsItsBucketAndItFillsAgainOverTheWindow() {
        let start = ContinuousClock.now
        var budget = AlreadyThereBudget(limit: 1000, window: .seconds(100))
        #expect(budget.take(Self.device(1), now: start) == 1000)
        #expect(budget.take(Self.device(1), now: start) == 0, "a second offer at once gets nothing")
        #expect(budget.available(Self.device(2), now: start) == 1000, "another device has its own")
        #expect(budget.available(Self.device(1), now: start + .seconds(25)) == 250)
        #expect(budget.available(Self.device(1), now: start + .seconds(500)) == 1000, "never past the limit")
        budget.giveBack(600, to: Self.device(1), now: start + .seconds(10))
        #expect(budget.available(Self.device(1), now: start + .seconds(10)) == 700)
        budget.giveBack(900, to: Self.device(1), now: start + .seconds(10))
        #expect(budget.available(Self.device(1), now: start + .seconds(10)) == 1000)
    }

    @Test func bucketsAreBoundedAndTheLatestSpentOneStays() {
        let start = ContinuousClock.now
        var budget = AlreadyThereBudget(limit: 1000, window: .seconds(100))
        _ = budget.take(Self.device(0), now: start + .seconds(99))  // spent late: still empty at the end
        for index in 1...(AlreadyThereBudget.maxBuckets + 10) {
            let id = DeviceID(bytes: [UInt8(index & 0xFF), UInt8(index >> 8)] + [UInt8](repeating: 1, count: 30))!
            _ = budget.take(id, now: start)
        }
        #expect(budget.bucketCount <= AlreadyThereBudget.maxBuckets)
        #expect(budget.available(Self.device(0), now: start + .seconds(99)) == 0)
    }
}
