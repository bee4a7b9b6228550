/// The body of `POST /api/localsend/v2/prepare-upload`: who sends (`info`) and what (`files`, a map from each
/// file's id to the file, whose `id` must be its key).
///
/// Bounded before it is built: the body's bytes (`maxPrepareUploadBytes`, 413) before parsing, the map's
/// entries while parsing (`maxFiles`, 413 at the 10001st, the rest never allocated), every field once read.
/// At least one file (as the apps' own servers require: an empty map is a 400).
public struct LocalSendPrepareUpload: Equatable, Sendable {
    /// The sender's device description (`info`).
    public var info: LocalSendDevice
    /// The files in the order the sender listed them.
    public var files: [LocalSendFile]

    /// A prepare-upload offering `files` from `info`, as given (not checked here).
    public init(info: LocalSendDevice, files: [LocalSendFile]) {
        self.info = info
        self.files = files
    }

    /// Decodes a prepare-upload body within the bounds above (413 over a size or count, 400 for anything malformed).
    public init(json body: ArraySlice<UInt8>) throws(HTTPError) {
        let bounds = BoundedJSONParser.Bounds(
            maxBytes: LocalSendLimits.maxPrepareUploadBytes, maxEntries: LocalSendLimits.maxFiles,
            maxStringBytes: LocalSendLimits.maxPreviewBytes, maxValues: LocalSendLimits.maxPrepareUploadValues)
        let root = try JSONObject.from(BoundedJSONParser.parse(body, bounds: bounds), path: "$")
        guard let info = try root.optionalObject("info", in: "$") else { throw .invalidJSON("$.info: missing") }
        self.info = try LocalSendDevice(object: info, path: "$.info")
        guard let map = try root.optionalObject("files", in: "$") else { throw .invalidJSON("$.files: missing") }
        guard !map.members.isEmpty else { throw .invalidJSON("$.files: no file") }
        files = []
        files.reserveCapacity(map.members.count)
        for (key, value) in map.members {
            let path = "$.files." + key.prefix(64)
            let file = try LocalSendFile(object: JSONObject.from(value, path: path), path: path)
            guard file.id == key else { throw .invalidJSON("\(path).id: differs from its key") }
            files.append(file)
        }
    }

    /// The body to send: `info`, then `files` as a map keyed by each file's id, in order.
    public func encoded() -> [UInt8] {
        var root = JSONObject()
        root.add("info", .object(info.jsonObject))
        root.add("files", .object(JSONObject(files.map { ($0.id, .object($0.jsonObject)) })))
        return JSONValue.object(root).encoded()
    }
}
