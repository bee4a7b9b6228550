import Foundation
import Testing

@testable import FerryCLI

/// `--json` lines are valid JSON, keep their key order and never contain a raw control character.
@Suite struct JSONLineTests {
    @Test func orderedKeysAndValueKinds() {
        var line: JSONLine = ["event": "peerFound", "port": 41971, "rate": 2.5, "ok": true, "name": nil]
        line.append("tags", ["a", 1, ["nested": false]])
        line.append("port", 0)
        #expect(
            line.text
                == #"{"event":"peerFound","port":0,"rate":2.5,"ok":true,"name":null,"tags":["a",1,{"nested":false}]}"#
        )
    }

    @Test func doubles() {
        let line: JSONLine = [
            "whole": 3.0, "small": 0.00001, "big": 1e21, "negative": -0.5, "nan": .double(.nan),
            "inf": .double(.infinity),
        ]
        #expect(line.text == #"{"whole":3.0,"small":1e-05,"big":1e+21,"negative":-0.5,"nan":null,"inf":null}"#)
    }

    @Test(arguments: [
        ("say \"hi\"", #""say \"hi\"""#),
        ("back\\slash", #""back\\slash""#),
        ("nl\ncr\rtab\tbs\u{08}ff\u{0C}", #""nl\ncr\rtab\tbs\bff\f""#),
        ("nul\u{00}esc\u{1B}[31m", #""nul\u0000esc\u001b[31m""#),
        ("del\u{7F}c1\u{9B}", #""del\u007fc1\u009b""#),
        ("bidi\u{202E}sep\u{2028}\u{2029}", #""bidi\u202esep\u2028\u2029""#),
        ("café 日本 🚢", #""café 日本 🚢""#),
        ("slash/", #""slash/""#),
    ])
    func stringEscaping(input: String, expected: String) throws {
        let line: JSONLine = [input: .string(input)]
        #expect(line.text == "{\(expected):\(expected)}")
        #expect(!line.text.unicodeScalars.contains { TerminalText.needsEscape($0) })
        // Whatever the escaping, a JSON parser reads back the original text.
        let parsed = try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: String]
        #expect(parsed == [input: input])
    }

    @Test func everyScalarRoundTrips() throws {
        var text = ""
        for value in UInt32(0)...0x3000 {
            if let scalar = Unicode.Scalar(value) {
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\u{1F6A2}\u{10FFFF}"
        let line: JSONLine = ["text": .string(text)]
        let parsed = try JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: String]
        #expect(parsed?["text"] == text)
        #expect(!line.text.contains("\n"))
    }
}
