import Foundation
import Testing

@testable import FerryWire

/// LocalSend's JSON as each app version and PyPI peer writes it (Fixtures/localsend/, docs/LOCALSEND.md "Wire").
@Suite("LocalSend JSON")
struct LocalSendJSONTests {
    static let directory = Fixtures.directory.deletingLastPathComponent().appendingPathComponent("localsend")
    static let fingerprint = "3f1c8a7e5d2b4c6a9e0f1d2c3b4a59687766554433221100ffeeddccbbaa9988"
    static let sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    static func fixture(_ name: String) throws -> ArraySlice<UInt8> {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent("\(name).json")))[...]
    }

    @Test func app117AnnouncementSpellsTheFlagBothWays() throws {
        let device = try LocalSendDevice(json: Self.fixture("app-1.17-announcement"))
        #expect(
            device
                == LocalSendDevice(
                    alias: "Nice Orange", version: "2.1", deviceModel: "Pixel 7", deviceType: "mobile",
                    fingerprint: Self.fingerprint, port: 53317, scheme: "https", download: false, announce: true))
    }

    @Test func app118AnnouncementHasNoFlag() throws {
        let device = try LocalSendDevice(json: Self.fixture("app-1.18-announcement"))
        #expect(device.version == "2.2" && device.announce == nil && device.deviceType == "desktop")
        #expect(try LocalSendDevice(json: Array(#"{"alias":"v1","announcement":true}"#.utf8)[...]).announce == true)
        #expect(try LocalSendDevice(json: Array(#"{"alias":"x","announce":false}"#.utf8)[...]).announce == false)
    }

    @Test func aV1InfoHasOnlyAliasModelAndType() throws {
        let device = try LocalSendDevice(json: Self.fixture("v1-info"))
        #expect(device == LocalSendDevice(alias: "Old Phone", deviceModel: "Samsung", deviceType: "mobile"))
    }

    @Test func app117PrepareUploadHasNoDigestAndATextMessageInItsPreview() throws {
        let upload = try LocalSendPrepareUpload(json: Self.fixture("app-1.17-prepare-upload"))
        #expect(upload.info.version == "2.1" && upload.info.port == 53317)
        #expect(upload.files.map(\.fileName) == ["IMG_0001.HEIC", "7d2e9a40-1b3c-4d5e-8f60-718293a4b5c6.txt"])
        #expect(upload.files.allSatisfy { $0.sha256 == nil })
        #expect(upload.files[0].size == 2_345_678 && upload.files[0].modified == "2026-11-30T09:12:44.000Z")
        #expect(upload.files[1].preview == "Hello ferry")
    }

    @Test func app118PrepareUploadCarriesSHA256AndAFolderName() throws {
        let upload = try LocalSendPrepareUpload(json: Self.fixture("app-1.18-prepare-upload"))
        #expect(upload.info.deviceModel == nil && upload.info.version == "2.2")
        let file = try #require(upload.files.first)
        #expect(file.fileName == "Photos/beach é.jpg" && file.sha256 == Self.sha256)
        #expect(file.modified == "2026-08-01T10:20:30.456789012Z" && file.accessed == nil)
    }

    @Test(arguments: ["localsendd-0.1.1", "localsend-cli-0.1.1", "localsend-0.1.2"])
    func eachPyPIPeersPrepareUploadDecodes(_ peer: String) throws {
        let upload = try LocalSendPrepareUpload(json: Self.fixture("\(peer)-prepare-upload"))
        #expect(upload.files.count == 1)
        #expect(upload.files[0].sha256?.utf8.count == 64)
        #expect(upload.info.fingerprint?.lowercased() == Self.fingerprint)
    }

    @Test func app117HashFieldIsReadAsTheDigest() throws {
        let body =
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"n","size":1,"fileType":"t","hash":"ab"}}}"#
        #expect(try LocalSendPrepareUpload(json: Array(body.utf8)[...]).files[0].sha256 == "ab")
    }

    @Test func aReplyDecodesAndEachMessageRoundTrips() throws {
        let reply = try LocalSendPrepareUploadReply(json: Self.fixture("app-1.18-prepare-upload-reply"))
        #expect(reply.sessionID == "5f0c6c3e-2f47-4b8a-9b59-1c2d3e4f5a6b" && reply.tokens.count == 1)
        #expect(try LocalSendPrepareUploadReply(json: reply.encoded()[...]) == reply)
        for name in ["app-1.17-prepare-upload", "app-1.18-prepare-upload", "localsend-0.1.2-prepare-upload"] {
            let upload = try LocalSendPrepareUpload(json: Self.fixture(name))
            #expect(try LocalSendPrepareUpload(json: upload.encoded()[...]) == upload, "\(name)")
        }
        let device = try LocalSendDevice(json: Self.fixture("app-1.17-announcement"))
        #expect(try LocalSendDevice(json: device.encoded()[...]) == device)
        let error = LocalSendErrorBody(message: "Invalid \"PIN\"\n\u{1}")
        #expect(try LocalSendErrorBody(json: error.encoded()[...]) == error)
    }

    /// A 10 MB body is refused by its length before one byte of it is parsed or copied.
    @Test func aTenMegabyteBodyIsRefusedBeforeParsing() {
        let body = [UInt8](repeating: UInt8(ascii: " "), count: 10_000_000)
        let limit = LocalSendLimits.maxPrepareUploadBytes
        #expect(throws: HTTPError.bodyTooLarge(length: 10_000_000, limit: limit)) {
            try LocalSendPrepareUpload(json: body[...])
        }
        #expect(throws: HTTPError.bodyTooLarge(length: 10_000_000, limit: LocalSendLimits.maxDeviceBodyBytes)) {
            try LocalSendDevice(json: body[...])
        }
    }

    /// 100000 files (800 KB, within the byte bound) are refused at the 10001st entry: the rest is never built.
    @Test func aHundredThousandFilesAreRefusedByCount() {
        var body = Array(#"{"info":{"alias":"a"},"files":{"#.utf8)
        for index in 0..<100_000 {
            body += Array("\(index == 0 ? "" : ",")\"\(index)\":{}".utf8)
        }
        body += Array("}}".utf8)
        #expect(body.count < LocalSendLimits.maxPrepareUploadBytes)
        #expect(throws: HTTPError.tooManyEntries("$.files", limit: LocalSendLimits.maxFiles)) {
            try LocalSendPrepareUpload(json: body[...])
        }
    }

    /// An unknown field of nested arrays (30 x 10000 zeros, 600 KB, every container within its own entry
    /// bound) is refused by the document's value budget instead of being built (4 MiB of it was 2M values).
    @Test func manySmallContainersAreRefusedByTheDocumentsValueBudget() {
        let zeros = "[" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]"
        let nested = "[" + Array(repeating: zeros, count: 30).joined(separator: ",") + "]"
        let body = Array(#"{"info":{"alias":"a","x":\#(nested)},"files":{}}"#.utf8)
        #expect(body.count < LocalSendLimits.maxPrepareUploadBytes)
        let limit = LocalSendLimits.maxPrepareUploadValues
        #expect(throws: HTTPError.tooManyEntries("$ (values in the document)", limit: limit)) {
            try LocalSendPrepareUpload(json: body[...])
        }
        let small = "[" + Array(repeating: "0", count: 200).joined(separator: ",") + "]"
        let device = Array(#"{"alias":"a","x":[\#(Array(repeating: small, count: 40).joined(separator: ","))]}"#.utf8)
        #expect(device.count < LocalSendLimits.maxDeviceBodyBytes)
        #expect(throws: HTTPError.tooManyEntries("$ (values in the document)", limit: LocalSendLimits.maxDeviceValues))
        {
            try LocalSendDevice(json: device[...])
        }
    }

    static let refusals: [(String, String)] = [
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"n","size":"1","fileType":"t"}}}"#,
            "size: expected a number"
        ),
        (#"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"n","size":-1,"fileType":"t"}}}"#, "outside 0"),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"n","size":9223372036854775808,"fileType":"t"}}}"#,
            "not an integer within 64 bits"
        ),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"x","fileName":"n","size":1.5,"fileType":"t"}}}"#,
            "not an integer"
        ),
        (
            #"{"info":{"alias":"a"},"files":{"x":{"id":"y","fileName":"n","size":1,"fileType":"t"}}}"#,
            "differs from its key"
        ),
        (#"{"info":{"alias":"a"},"files":{"x":{"id":"x","size":1,"fileType":"t"}}}"#, "fileName: missing"),
        (#"{"info":{"alias":"a"},"files":{}}"#, "no file"),
        (#"{"info":{"alias":"a","port":0},"files":{}}"#, "port: 0 is outside 1...65535"),
        (#"{"info":{"alias":"a","port":65536},"files":{}}"#, "port: 65536 is outside"),
        (#"{"info":{"alias":"a","port":-2},"files":{}}"#, "port: -2 is outside"),
        (#"{"info":{"alias":null},"files":{}}"#, "alias: missing"),
        (#"{"info":{"alias":1},"files":{}}"#, "alias: expected a string"),
        (#"{"info":{"alias":"a","download":"yes"},"files":{}}"#, "download: expected true or false"),
        (#"{"info":"a","files":{}}"#, "$.info: expected an object"),
        (#"{"info":{"alias":"a","alias":"b"},"files":{}}"#, "duplicate key"),
        (#"{"info":{"alias":"a"},"files":{}} x"#, "bytes after the value"),
        (#"{"info":{"alias":"a\ud800"},"files":{}}"#, "lone surrogate"),
        (#"{"info":{"alias":"a",},"files":{}}"#, "expected a key"),
        (#"{"a":[[[[[[[[[]]]]]]]]]}"#, "nested deeper than 8"),
        (#"{"info":{"alias":"a","n":01},"files":{}}"#, "leading zero"),
    ]

    @Test func wrongTypesAndValuesAreRefusedWithAClearError() {
        for (body, expected) in Self.refusals {
            do {
                _ = try LocalSendPrepareUpload(json: Array(body.utf8)[...])
                Issue.record("accepted \(body)")
            } catch {
                #expect(error.status.code == 400, "\(body)")
                #expect(error.description.contains(expected), "\(body): \(error)")
            }
        }
    }

    @Test func stringsAreBoundedAndInvalidUTF8Refused() {
        let longAlias = String(repeating: "é", count: LocalSendLimits.maxAliasBytes / 2 + 1)
        #expect(throws: HTTPError.invalidJSON("$.alias: longer than 256 bytes")) {
            try LocalSendDevice(json: Array(#"{"alias":"\#(longAlias)"}"#.utf8)[...])
        }
        let invalid = Array(#"{"alias":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: HTTPError.invalidJSON("at byte 13: string is not UTF-8")) {
            try LocalSendDevice(json: invalid[...])
        }
    }

    /// Apps 1.17 and 1.18 send `"port": -1` in a prepare-upload's `info` while their own receive server is off.
    @Test func aPortOfMinusOneFromAnAppWhoseServerIsOffReadsAsNoPort() throws {
        let body =
            #"{"info":{"alias":"-","version":"2.1","port":-1},"files":{"x":{"id":"x","fileName":"n","size":1,"fileType":"t"}}}"#
        #expect(try LocalSendPrepareUpload(json: Array(body.utf8)[...]).info.port == nil)
        #expect(throws: HTTPError.invalidJSON("$.port: -2 is outside -1...65535")) {
            try LocalSendDevice(json: Array(#"{"alias":"a","port":-2}"#.utf8)[...])
        }
    }

    @Test func unknownFieldsAndNullOptionalsAreIgnored() throws {
        let body = #"{"alias":"a","deviceModel":null,"future":{"x":[1,true,null,"s"]},"port":53317}"#
        #expect(try LocalSendDevice(json: Array(body.utf8)[...]) == LocalSendDevice(alias: "a", port: 53317))
    }
}
