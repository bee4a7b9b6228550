extension Double {
    /// `3` for 3.0 and `2.5` for 2.5: a number as the user probably typed it, for error messages.
    var shortDescription: String {
        if rounded() == self, abs(self) < 1e15 {
            return String(Int(self))
        }
        return description
    }
}
