/// The Levenshtein distance between two words, for "did you mean" suggestions.
///
/// A mistyped option or subcommand (`--tiemout`, `peer`) is usually one or two edits away from the intended
/// one; suggesting it turns a dead end into a one-key fix.
enum EditDistance {
    /// The number of single-character insertions, deletions and substitutions that turn `a` into `b`.
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else {
            return b.count
        }
        guard !b.isEmpty else {
            return a.count
        }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The candidate closest to `word` if it is at most `maximum` edits away; the first one wins a tie.
    static func closest(to word: String, in candidates: [String], maximum: Int = 2) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = between(word, candidate)
            if distance <= maximum, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }
}
