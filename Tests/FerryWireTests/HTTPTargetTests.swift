import Testing

@testable import FerryWire

@Suite("HTTPTarget")
struct HTTPTargetTests {
    @Test func anUploadTargetSplitsIntoPathAndDecodedParameters() throws {
        let target = try HTTPTarget("/api/localsend/v2/upload?sessionId=a%2Bb+c&fileId=some%20file&token=t&flag")
        #expect(target.path == "/api/localsend/v2/upload")
        #expect(try target.value(for: "sessionId") == "a+b c")
        #expect(try target.value(for: "fileId") == "some file")
        #expect(try target.value(for: "token") == "t")
        #expect(try target.value(for: "flag") == "")
        #expect(try target.value(for: "pin") == nil)
        let query = try LocalSendQuery(target)
        #expect(try query.upload() == ("a+b c", "some file", "t"))
    }

    @Test func httpxsFormEncodingDecodesToWhatItMeant() throws {
        guard case .head(let head) = HTTPSamples.httpxStreamedUpload.parts[0] else { Issue.record("no head"); return }
        let query = try LocalSendQuery(HTTPTarget(head.target))
        #expect(try query.upload() == ("s 1", "f", "t+"))
    }

    @Test func aTargetWithoutQueryHasNoParameters() throws {
        let target = try HTTPTarget("/api/localsend/v2/info")
        #expect(target.path == "/api/localsend/v2/info" && target.query.isEmpty)
        #expect(throws: HTTPError.malformed("query: sessionId missing")) { try LocalSendQuery(target).upload() }
    }

    @Test(arguments: ["/?a=%zz", "/?a=%4", "/?a=%", "/?a=%E9", "/?%C3=1"])
    func invalidEscapesAndInvalidUTF8AreRefused(_ target: String) {
        #expect(throws: HTTPError.self) { try HTTPTarget(target) }
        #expect((try? HTTPTarget(target)) == nil)
    }

    @Test func decodedUTF8IsKept() throws {
        #expect(try HTTPTarget("/?pin=%C3%A9t%C3%A9").value(for: "pin") == "été")
    }

    @Test func aRepeatedParameterIsRefused() throws {
        let target = try HTTPTarget("/?token=a&token=b")
        #expect(throws: HTTPError.malformed("query: token given 2 times")) { try target.value(for: "token") }
    }

    @Test func moreParametersThanTheLimitAreRefused() throws {
        let many = (0...HTTPTarget.maxQueryParameters).map { "p\($0)=1" }.joined(separator: "&")
        #expect(throws: HTTPError.targetTooLong(limit: HTTPTarget.maxQueryParameters)) { try HTTPTarget("/?" + many) }
        let enough = (1...HTTPTarget.maxQueryParameters).map { "p\($0)=1" }.joined(separator: "&")
        #expect(try HTTPTarget("/?" + enough).query.count == HTTPTarget.maxQueryParameters)
    }

    @Test func aQueryEncodesToWhatDecodesBack() throws {
        let query = LocalSendQuery(sessionID: "s 1", fileID: "a/b&c=d", token: "+%", pin: "12 34")
        #expect(query.encoded == "?sessionId=s+1&fileId=a%2Fb%26c%3Dd&token=%2B%25&pin=12+34")
        #expect(try LocalSendQuery(HTTPTarget("/x" + query.encoded)) == query)
        #expect(LocalSendQuery().encoded == "")
    }
}
