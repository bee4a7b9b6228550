/// Shared validation of the `str8` text fields (session ID, display name, detail).
///
/// Encoders (`validate()`) and decoders apply the same length rules so a value that encodes also decodes.
enum StringField {
    static let sessionIDLengths = 1...Limits.maxSessionIDLength
    static let displayNameLengths = 1...Limits.maxDisplayNameLength
    static let detailLengths = 0...Limits.maxDetailLength

    static func checkLength(_ length: Int, _ field: String, lengths: ClosedRange<Int>) throws(WireError) {
        if length == 0 && lengths.lowerBound > 0 {
            throw .invalidField("\(field): empty")
        }
        if length < lengths.lowerBound {
            throw .invalidField("\(field): \(length) bytes, at least \(lengths.lowerBound) required")
        }
        if length > lengths.upperBound {
            throw .invalidField("\(field): \(length) bytes, more than the limit of \(lengths.upperBound)")
        }
    }

    /// Validates a string about to be encoded.
    static func validate(_ string: String, _ field: String, lengths: ClosedRange<Int>) throws(WireError) {
        try checkLength(string.utf8.count, field, lengths: lengths)
    }
}
