/// A seeded stream of English-like text: lines of words from `TextVocabulary`, with capitals,
/// commas, full stops, numbers and the odd blank line.
///
/// Why: compressible test files must behave like prose under zstd and zlib (about 3-5x at the fastest
/// levels), not like a repeated phrase (hundreds of times) nor like random bytes (none); the stream depends
/// only on its seed, so any prefix of a long file equals the shorter file of the same seed.
struct TextGenerator: Sendable {
    private var random: SplitMix64
    /// Recurring word groups ("of the water", "said that"): prose repeats phrases, not only words, and
    /// that repetition is what an LZ compressor finds. Half of all word slots take one of these.
    private var phrases: [[UInt8]] = []
    private var pending: [UInt8] = []
    private var consumed = 0
    private var startOfSentence = true

    init(seed: UInt64) {
        random = SplitMix64(seed: seed ^ 0x7465_7874)  // "text": a different stream than random files
        for _ in 0..<256 {
            var phrase: [UInt8] = []
            for index in 0..<(2 + random.below(5)) {
                if index > 0 { phrase.append(0x20) }
                phrase += nextWord()
            }
            phrases.append(phrase)
        }
    }

    /// Fills `buffer` with the next bytes of the stream.
    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var written = 0
        while written < buffer.count {
            if consumed == pending.count {
                pending.removeAll(keepingCapacity: true)
                consumed = 0
                appendLine()
            }
            let count = min(buffer.count - written, pending.count - consumed)
            pending.withUnsafeBytes { source in
                let slice = UnsafeRawBufferPointer(rebasing: source[consumed..<(consumed + count)])
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + count)]).copyMemory(from: slice)
            }
            consumed += count
            written += count
        }
    }

    private mutating func appendLine() {
        if random.below(14) == 0 {
            pending.append(0x0A)  // a paragraph break
            return
        }
        let words = 6 + random.below(10)
        for index in 0..<words {
            if index > 0 { pending.append(0x20) }
            appendWord()
            if index == words - 1 || random.below(9) == 0 {
                pending.append(random.below(12) == 0 ? 0x3F : 0x2E)  // "?" or "."
                startOfSentence = true
            } else if random.below(11) == 0 {
                pending.append(0x2C)  // ","
            }
        }
        pending.append(0x0A)
    }

    private mutating func appendWord() {
        if random.below(25) == 0 {
            appendNumber()
        } else {
            let first = pending.count
            if random.below(2) == 0 {
                let unit = nextUnit()
                pending += phrases[min(phrases.count - 1, Int(unit * unit * Double(phrases.count)))]
            } else {
                pending += nextWord()
            }
            if startOfSentence, (0x61...0x7A).contains(pending[first]) { pending[first] -= 0x20 }
        }
        startOfSentence = false
    }

    /// A word skewed towards the front of the frequency-ordered list, as in real prose.
    private mutating func nextWord() -> [UInt8] {
        let unit = nextUnit()
        let words = TextVocabulary.words
        return words[min(words.count - 1, Int(unit * unit * unit * Double(words.count)))]
    }

    /// A uniform value in [0, 1).
    private mutating func nextUnit() -> Double {
        Double(random.next() >> 11) / Double(1 << 53)
    }

    private mutating func appendNumber() {
        let number: Int
        switch random.below(3) {
        case 0: number = 1 + random.below(100)
        case 1: number = 1900 + random.below(130)
        default: number = random.below(100_000)
        }
        pending.append(contentsOf: Array(String(number).utf8))
    }
}
