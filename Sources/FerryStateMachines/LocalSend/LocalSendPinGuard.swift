/// Bounds PIN guessing on a LocalSend receiver: wrong PINs are counted per address and overall within a window, and
/// past either bound every `prepare-upload` (the right PIN included) is answered 429 until old failures age out.
///
/// The numbers: `perAddress` = 3 wrong PINs per address per `window` (60 s), as the apps and localsendd allow before
/// their 429; `overall` = 10 per window from every address together, because an address costs an attacker nothing on a
/// LAN (one more IP per 3 guesses). So at most 10 guesses a minute: a 6-digit PIN's million values take about 70 days
/// on average. The price is that a guesser can lock the right sender out for up to a minute; it gets the 429 and
/// tries again, as the apps do. Memory is bounded by the same numbers: at most `overall` failures are kept.
///
/// Pure: the caller passes the instant (`ContinuousClock`), so tests never sleep.
public struct LocalSendPinGuard: Sendable {
    /// Wrong PINs one address may send within `window`.
    public static let perAddress = 3
    /// Wrong PINs all addresses together may send within `window`.
    public static let overall = 10
    /// How long a wrong PIN counts.
    public static let window: Duration = .seconds(60)

    /// The decision on one PIN.
    public enum Verdict: Equatable, Sendable {
        /// No PIN is required, or this one is right.
        case accepted
        /// Missing or wrong: answer 401.
        case rejected
        /// Too many wrong PINs (from this address or overall): answer 429 without looking at this one.
        case lockedOut
    }

    /// The PIN a sender must give; nil when none is required.
    public let expected: String?
    /// Wrong PINs within the window, oldest first: (address, instant).
    private var failures: [(address: String, at: ContinuousClock.Instant)] = []

    /// A guard requiring `expected`; nil or empty means no PIN is required.
    public init(expected: String?) {
        self.expected = expected.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Decides on the PIN `given` (the request's `pin` query parameter, nil when absent) from `address` at `now`.
    public mutating func check(_ given: String?, from address: String, now: ContinuousClock.Instant) -> Verdict {
        guard let expected else { return .accepted }
        failures.removeAll { $0.at.advanced(by: Self.window) <= now }
        if failures.count >= Self.overall || failures.filter({ $0.address == address }).count >= Self.perAddress {
            return .lockedOut
        }
        if let given, Self.equalInConstantTime(Array(given.utf8), Array(expected.utf8)) {
            return .accepted
        }
        failures.append((address, now))
        return .rejected
    }

    /// Wrong PINs still counted at `now` (for tests and status).
    public func failureCount(now: ContinuousClock.Instant) -> Int {
        failures.filter { $0.at.advanced(by: Self.window) > now }.count
    }

    private static func equalInConstantTime(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        // Lengths compared whole: truncated to a byte, the right PIN plus 256 NUL bytes was equal.
        var difference: UInt8 = left.count == right.count ? 0 : 1
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
