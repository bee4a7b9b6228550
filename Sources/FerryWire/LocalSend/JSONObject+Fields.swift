/// Typed reads of an object's fields, each naming the field's path in its error ("files.a.size: ...").
///
/// Absent and `null` are the same for an optional field (the apps write both: Dart omits it, pydantic writes
/// null); a required field that is absent or null, or any field of the wrong JSON type, throws `invalidJSON`.
extension JSONObject {
    static func from(_ value: JSONValue, path: String) throws(HTTPError) -> JSONObject {
        guard case .object(let object) = value else { throw .invalidJSON("\(path): expected an object") }
        return object
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = self[key], value != .null else { return nil }
        return value
    }

    func optionalString(_ key: String, in path: String, maxBytes: Int) throws(HTTPError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let text) = value else { throw .invalidJSON("\(path).\(key): expected a string") }
        guard text.utf8.count <= maxBytes else {
            throw .invalidJSON("\(path).\(key): longer than \(maxBytes) bytes")
        }
        return text
    }

    func string(_ key: String, in path: String, maxBytes: Int) throws(HTTPError) -> String {
        guard let text = try optionalString(key, in: path, maxBytes: maxBytes) else {
            throw .invalidJSON("\(path).\(key): missing")
        }
        return text
    }

    /// An integer in `range`: a JSON number without fraction or exponent (`1.0` and `1e3` are refused).
    func optionalInteger(_ key: String, in path: String, range: ClosedRange<Int64>) throws(HTTPError) -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .number(let literal) = value else { throw .invalidJSON("\(path).\(key): expected a number") }
        guard let integer = Int64(literal) else {
            throw .invalidJSON("\(path).\(key): not an integer within 64 bits")
        }
        guard range.contains(integer) else {
            throw .invalidJSON("\(path).\(key): \(integer) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return integer
    }

    func optionalBool(_ key: String, in path: String) throws(HTTPError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let flag) = value else { throw .invalidJSON("\(path).\(key): expected true or false") }
        return flag
    }

    func optionalObject(_ key: String, in path: String) throws(HTTPError) -> JSONObject? {
        guard let value = present(key) else { return nil }
        return try JSONObject.from(value, path: "\(path).\(key)")
    }
}
