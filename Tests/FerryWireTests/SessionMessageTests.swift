import Testing

@testable import FerryWire

@Suite("Session messages")
struct SessionMessageTests {
    /// The fixed-layout messages whose every truncated payload must be rejected as malformed.
    static let truncatable: [FrameCase] = Samples.frameCases.filter {
        ["hello", "deny", "heartbeat", "goodbye"].contains($0.name)
    }

    @Test(arguments: truncatable)
    func everyTruncatedPayloadIsMalformed(_ golden: FrameCase) throws {
        let payload = golden.message.frame.payload
        for length in 0..<payload.count {
            let frame = Frame(kind: golden.message.kind, payload: Array(payload[..<length]))
            #expect {
                try SessionMessage(frame: frame)
            } throws: { error in
                guard case .malformed(let what) = error as? WireError else { return false }
                return what.hasPrefix("\(golden.message.kind): truncated at ")
            }
        }
    }

    @Test func truncationNamesTheField() {
        let payload = SessionMessage.hello(Samples.hello).frame.payload
        #expect(throws: WireError.malformed("hello: truncated at deviceID")) {
            try SessionMessage(frame: Frame(kind: .hello, payload: Array(payload[..<20])))
        }
    }

    @Test func emptyMessagesIgnoreExtraBytes() throws {
        #expect(try SessionMessage(frame: Frame(kind: .connectionRequest, payload: [1, 2])) == .connectionRequest)
        #expect(try SessionMessage(frame: Frame(kind: .accept, payload: [9])) == .accept)
    }

    @Test func pairingCarriesExactly32BytesAndIgnoresTrailingOnes() throws {
        let nonce = (0..<32).map { UInt8($0) }
        let message = SessionMessage.pairing(nonce)
        #expect(message.encoded() == [0x00, 0x08, 0x00, 0x00, 0x00, 0x20] + nonce)
        #expect(try SessionMessage(frame: Frame(kind: .pairing, payload: nonce + [9, 9])) == message)
        #expect(throws: WireError.self) { try SessionMessage(frame: Frame(kind: .pairing, payload: Array(nonce.prefix(31)))) }
        #expect(throws: WireError.self) { try SessionMessage.pairing([1, 2]).validate() }
    }

    @Test func aHelloCarriesAnOptionalPairingCommitment() throws {
        var hello = Samples.hello
        hello.pairingCommitment = (0..<32).map { UInt8(255 - $0) }
        let frame = SessionMessage.hello(hello).frame
        #expect(frame.payload.count == SessionMessage.hello(Samples.hello).frame.payload.count + 32)
        #expect(try SessionMessage(frame: frame) == .hello(hello))
        // Fewer than 32 extension bytes are no commitment (ignored, as any extension).
        let short = Frame(kind: .hello, payload: SessionMessage.hello(Samples.hello).frame.payload + [1, 2, 3])
        #expect(try SessionMessage(frame: short) == .hello(Samples.hello))
    }

    @Test func fixedLayoutsIgnoreTrailingBytes() throws {
        for message in [SessionMessage.deny(Samples.deny), .goodbye(Samples.goodbye), .heartbeat(Samples.heartbeat)] {
            let frame = Frame(kind: message.kind, payload: message.frame.payload + [0xDE, 0xAD])
            #expect(try SessionMessage(frame: frame) == message)
        }
    }

    @Test(arguments: [UInt16(0x0000), 0x0009, 0x0042, 0x00FF, 0x0200, 0x7FFF])
    func unknownCriticalKindIsAnError(_ kind: UInt16) {
        #expect(throws: WireError.unknownCriticalFrame(kind: kind)) {
            try SessionMessage(frame: Frame(kind: FrameKind(kind), payload: [1]))
        }
    }

    @Test(arguments: [UInt16(0x0100), 0x0102, 0x01FF])
    func transferKindsPassThroughWhole(_ kind: UInt16) throws {
        let frame = Frame(kind: FrameKind(kind), payload: [1, 2, 3])
        #expect(try SessionMessage(frame: frame) == .transfer(frame))
    }

    @Test(arguments: [UInt16(0x8000), 0x8001, 0x8123, 0xFFFF])
    func unknownIgnorableKindIsIgnored(_ kind: UInt16) throws {
        #expect(try SessionMessage(frame: Frame(kind: FrameKind(kind), payload: [1])) == .ignored(FrameKind(kind)))
        #expect(FrameKind(kind).isIgnorable)
    }

    @Test func helloWithInvalidUTF8IsInvalidField() {
        var payload = SessionMessage.hello(Samples.hello).frame.payload
        // displayName "Zoë's laptop": break the 2-byte "ë" (C3 AB) by making its second byte a lead byte.
        let index = payload.lastIndex(of: 0xAB)!
        payload[index] = 0xC3
        #expect(throws: WireError.invalidField("displayName: invalid UTF-8")) {
            try SessionMessage(frame: Frame(kind: .hello, payload: payload))
        }
    }

    @Test func denyDetailWithInvalidUTF8IsInvalidField() {
        #expect(throws: WireError.invalidField("detail: invalid UTF-8")) {
            try SessionMessage(frame: Frame(kind: .deny, payload: [1, 2, 0xFF, 0xFE]))
        }
        #expect(throws: WireError.invalidField("detail: invalid UTF-8")) {
            try SessionMessage(frame: Frame(kind: .goodbye, payload: [1, 1, 0x80]))
        }
    }

    @Test func helloStringLengthRules() throws {
        let prefix = Array(SessionMessage.hello(Samples.hello).frame.payload[..<51])
        let name: [UInt8] = [1, 0x41]
        #expect(throws: WireError.invalidField("sessionID: empty")) {
            try SessionMessage(frame: Frame(kind: .hello, payload: prefix + [0] + name))
        }
        let long = [UInt8](repeating: 0x61, count: 65)
        #expect(throws: WireError.invalidField("sessionID: 65 bytes, more than the limit of 64")) {
            try SessionMessage(frame: Frame(kind: .hello, payload: prefix + [65] + long + name))
        }
        #expect(throws: WireError.invalidField("displayName: empty")) {
            try SessionMessage(frame: Frame(kind: .hello, payload: prefix + [1, 0x61, 0]))
        }
        let exact = [UInt8](repeating: 0x61, count: 64)
        let decoded = try SessionMessage(frame: Frame(kind: .hello, payload: prefix + [64] + exact + [64] + exact))
        guard case .hello(let hello) = decoded else { Issue.record("not a hello"); return }
        #expect(hello.sessionID.utf8.count == 64)
        #expect(hello.displayName.utf8.count == 64)
    }

    @Test func helloUnknownModeIsInvalidField() {
        var payload = SessionMessage.hello(Samples.hello).frame.payload
        payload[42] = 9
        #expect(throws: WireError.invalidField("mode: unknown value 9")) {
            try SessionMessage(frame: Frame(kind: .hello, payload: payload))
        }
    }

    @Test func helloOverTheHelloLimitIsRejected() {
        let payload = SessionMessage.hello(Samples.hello).frame.payload
        let padded = payload + [UInt8](repeating: 0, count: Limits.maxHelloPayload - payload.count)
        #expect(throws: Never.self) { try SessionMessage(frame: Frame(kind: .hello, payload: padded)) }
        #expect(throws: WireError.payloadTooLarge(length: 1025, limit: 1024)) {
            try SessionMessage(frame: Frame(kind: .hello, payload: padded + [0]))
        }
    }

    @Test func messageSizeLimit() throws {
        let largest = [UInt8](repeating: 1, count: Limits.maxMessageSize)
        #expect(try SessionMessage(frame: Frame(kind: .message, payload: largest)) == .message(largest))
        #expect(throws: Never.self) { try SessionMessage.message(largest).validate() }
        let tooLarge = largest + [1]
        #expect(throws: WireError.payloadTooLarge(length: Limits.maxMessageSize + 1, limit: Limits.maxMessageSize)) {
            try SessionMessage(frame: Frame(kind: .message, payload: tooLarge))
        }
        #expect(throws: WireError.self) { try SessionMessage.message(tooLarge).validate() }
        #expect(try SessionMessage(frame: Frame(kind: .message, payload: [])) == .message([]))
    }

    @Test func unknownReasonsAndCapabilitiesArePreserved() throws {
        let deny = SessionMessage.deny(Deny(reason: DenyReason(rawValue: 200)))
        #expect(try SessionMessage(frame: deny.frame) == deny)
        #expect(DenyReason(rawValue: 200).description == "unknown reason (200)")
        let goodbye = SessionMessage.goodbye(Goodbye(reason: GoodbyeReason(rawValue: 99), detail: "later"))
        #expect(try SessionMessage(frame: goodbye.frame) == goodbye)
        var hello = Samples.hello
        hello.capabilities = Capabilities(rawValue: 0xF000_0007)
        #expect(try SessionMessage(frame: SessionMessage.hello(hello).frame) == .hello(hello))
    }

    @Test func validateRejectsOverlongStrings() {
        var hello = Samples.hello
        hello.displayName = String(repeating: "ë", count: 32)  // 64 UTF-8 bytes
        #expect(throws: Never.self) { try hello.validate() }
        hello.displayName += "x"
        #expect(throws: WireError.invalidField("displayName: 65 bytes, more than the limit of 64")) {
            try hello.validate()
        }
        hello.displayName = "ok"
        hello.sessionID = ""
        #expect(throws: WireError.invalidField("sessionID: empty")) { try SessionMessage.hello(hello).validate() }
        #expect(throws: WireError.self) {
            try Deny(reason: .serverFull, detail: String(repeating: "d", count: 256)).validate()
        }
        #expect(throws: Never.self) {
            try Deny(reason: .serverFull, detail: String(repeating: "d", count: 255)).validate()
        }
        #expect(throws: WireError.self) {
            try Goodbye(reason: .timedOut, detail: String(repeating: "é", count: 128)).validate()
        }
    }

    @Test func roundTripOfEveryMessage() throws {
        let messages: [SessionMessage] = [
            .hello(Samples.hello), .connectionRequest, .accept, .deny(Deny(reason: .sessionMismatch)),
            .message([0, 1, 2, 255]), .heartbeat(Heartbeat(sequence: .max)),
            .goodbye(Goodbye(reason: .protocolError, detail: "frame 🚢")),
        ]
        for message in messages {
            var decoder = FrameDecoder()
            decoder.append(message.encoded())
            #expect(try decoder.nextFrame().map(SessionMessage.init(frame:)) == message)
        }
    }

    @Test func descriptions() {
        #expect(DenyReason.deniedByUser.description == "denied by the user")
        #expect(DenyReason.serverFull.description == "the server is full")
        #expect(DenyReason.notAccepting.description == "not accepting connections")
        #expect(DenyReason.alreadyConnected.description == "already connected")
        #expect(DenyReason.sessionMismatch.description == "different session")
        #expect(DenyReason.untrusted.description == "it accepts trusted peers only")
        #expect(DenyReason(rawValue: 99).description == "unknown reason (99)")
        #expect(GoodbyeReason.timedOut.description == "timed out")
        #expect(FrameKind.connectionRequest.description == "connectionRequest")
        #expect(FrameKind(0x8123).description == "kind 0x8123")
        #expect(PeerMode.server.description == "server")
        #expect(Capabilities([.zlib, .datagrams]).description == "[zlib, datagrams]")
        let errors: [WireError] = [
            .badMagic, .unsupportedVersion(major: 2, minor: 0), .frameTooLarge(length: 5, limit: 4),
            .unknownCriticalFrame(kind: 0x42), .malformed("x"), .payloadTooLarge(length: 2, limit: 1),
            .invalidField("y"),
        ]
        for error in errors {
            #expect(error.description.first?.isUppercase == true)
            #expect(error.description.hasSuffix("."))
        }
        #expect(WireError.unknownCriticalFrame(kind: 0x42).description.contains("0x0042"))
    }
}
