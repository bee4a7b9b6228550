/// A LocalSend device's description: the multicast announcement, the `register` request and response, the
/// `info` response and the `info` of a prepare-upload are all this object, with different fields present.
///
/// Field by field (docs/LOCALSEND.md, "Wire"): `alias` is the only field every version sends; `version`
/// ("2.0", "2.1", "2.2"; absent from v1 apps), `deviceModel` and `deviceType` (both nullable), `fingerprint`
/// (absent from a v1 info), `port` and `protocol` (v2 announcements and registers, not info), `download`
/// (optional, default false), and the announcement flag, spelled `announcement` by v1 and `announce` by v2 (app
/// 1.17 writes both, 1.18 sends announcements only and writes neither). Unknown fields are ignored. Nothing here
/// is trusted: the peer's identity is its certificate's hash, never `fingerprint` or `alias`.
public struct LocalSendDevice: Equatable, Sendable {
    /// The name shown to the user, at most `maxAliasBytes` (256) UTF-8 bytes; the only field every version sends.
    public var alias: String
    /// The protocol version ("2.0", "2.1", "2.2"), at most `maxShortFieldBytes`; nil from v1 apps.
    public var version: String?
    /// The device's model as its app names it (`deviceModel`), at most `maxAliasBytes` (256); nullable.
    public var deviceModel: String?
    /// "mobile", "desktop", "web", "headless", "server", or another value a newer app sends (shown as desktop).
    public var deviceType: String?
    /// The sender's self-declared fingerprint, at most `maxFingerprintBytes` (128); never trusted as identity.
    public var fingerprint: String?
    /// 1...65535; nil when absent or -1 (the apps' "my receive server is off").
    public var port: Int?
    /// The `protocol` field: "http" or "https" (kept as sent; ferry only ever speaks HTTPS).
    public var scheme: String?
    /// Whether the device serves its files for download (`download`; absent means false).
    public var download: Bool?
    /// True when this is an announcement that asks for a reply (`announce` or `announcement` true).
    public var announce: Bool?

    /// A device description with these fields; nil fields are left out of `encoded()`.
    public init(
        alias: String, version: String? = nil, deviceModel: String? = nil, deviceType: String? = nil,
        fingerprint: String? = nil, port: Int? = nil, scheme: String? = nil, download: Bool? = nil,
        announce: Bool? = nil
    ) {
        self.alias = alias
        self.version = version
        self.deviceModel = deviceModel
        self.deviceType = deviceType
        self.fingerprint = fingerprint
        self.port = port
        self.scheme = scheme
        self.download = download
        self.announce = announce
    }

    /// Decodes a register body, an info response or an announcement datagram (at most `maxDeviceBodyBytes`).
    public init(json body: ArraySlice<UInt8>) throws(HTTPError) {
        let bounds = BoundedJSONParser.Bounds(
            maxBytes: LocalSendLimits.maxDeviceBodyBytes, maxEntries: 256, maxStringBytes: 4096,
            maxValues: LocalSendLimits.maxDeviceValues)
        try self.init(object: JSONObject.from(BoundedJSONParser.parse(body, bounds: bounds), path: "$"), path: "$")
    }

    init(object: JSONObject, path: String) throws(HTTPError) {
        let short = LocalSendLimits.maxShortFieldBytes
        alias = try object.string("alias", in: path, maxBytes: LocalSendLimits.maxAliasBytes)
        version = try object.optionalString("version", in: path, maxBytes: short)
        deviceModel = try object.optionalString("deviceModel", in: path, maxBytes: LocalSendLimits.maxAliasBytes)
        deviceType = try object.optionalString("deviceType", in: path, maxBytes: short)
        fingerprint = try object.optionalString("fingerprint", in: path, maxBytes: LocalSendLimits.maxFingerprintBytes)
        // -1 is what apps 1.17 and 1.18 write when their own receive server is off (`serverState?.port ?? -1`):
        // no port to call back, not a malformed message.
        let port = try object.optionalInteger("port", in: path, range: -1...65535)
        guard port != 0 else { throw .invalidJSON("\(path).port: 0 is outside 1...65535") }
        self.port = port == -1 ? nil : port.map { Int($0) }
        scheme = try object.optionalString("protocol", in: path, maxBytes: short)
        download = try object.optionalBool("download", in: path)
        let announce = try object.optionalBool("announce", in: path)
        let announcement = try object.optionalBool("announcement", in: path)
        // As the apps read it: a reply is wanted when either spelling says so.
        self.announce = announce == nil && announcement == nil ? nil : (announce == true || announcement == true)
    }

    /// The JSON object, fields in the protocol's order, absent optionals omitted; `announce` is written in v2's
    /// spelling only (every v2 app reads it; v1 apps predate HTTPS and are not served).
    var jsonObject: JSONObject {
        var object = JSONObject()
        object.add("alias", .string(alias))
        object.add("version", version.map { .string($0) })
        object.add("deviceModel", deviceModel.map { .string($0) })
        object.add("deviceType", deviceType.map { .string($0) })
        object.add("fingerprint", fingerprint.map { .string($0) })
        object.add("port", port.map { .number(String($0)) })
        object.add("protocol", scheme.map { .string($0) })
        object.add("download", download.map { .bool($0) })
        object.add("announce", announce.map { .bool($0) })
        return object
    }

    /// The body to send (a register, an info response, an announcement).
    public func encoded() -> [UInt8] {
        JSONValue.object(jsonObject).encoded()
    }
}
