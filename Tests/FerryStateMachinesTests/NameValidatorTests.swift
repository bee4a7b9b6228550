import FerryTestSupport
import Testing

@testable import FerryStateMachines

/// NameValidator: every rule, legitimate names, and random strings that must never trap.
@Suite struct NameValidatorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var path: String
        var expected: Result<[String], NameError>
        var testDescription: String { String(reflecting: path) }

        init(_ path: String, _ expected: NameError) {
            self.path = path
            self.expected = .failure(expected)
        }

        init(_ path: String, _ components: [String]) {
            self.path = path
            self.expected = .success(components)
        }
    }

    static let longComponent = String(repeating: "a", count: 255)

    static let cases: [Case] = [
        // Legitimate names.
        Case("a/b/c.txt", ["a", "b", "c.txt"]),
        Case("Zoë.jpg", ["Zoë.jpg"]),
        Case(".hidden", [".hidden"]),
        Case("name with spaces", ["name with spaces"]),
        Case("日本語.txt", ["日本語.txt"]),
        Case("back\\slash", ["back\\slash"]),
        Case("...", ["..."]),
        Case("..a/a..", ["..a", "a.."]),
        Case(".ferry-staging2/x", [".ferry-staging2", "x"]),
        Case("emoji 📷/Photo 1.HEIC", ["emoji 📷", "Photo 1.HEIC"]),
        Case(longComponent, [longComponent]),
        Case(
            Array(repeating: String(repeating: "b", count: 200), count: 20).joined(separator: "/"),
            Array(repeating: String(repeating: "b", count: 200), count: 20)),
        // empty
        Case("", .empty),
        // absolute
        Case("/etc/passwd", .absolute),
        Case("/", .absolute),
        Case("//x", .absolute),
        // parentReference
        Case("..", .parentReference),
        Case("../x", .parentReference),
        Case("a/../../b", .parentReference),
        Case("a/..", .parentReference),
        // emptyComponent
        Case(".", .emptyComponent),
        Case("./a", .emptyComponent),
        Case("a/./b", .emptyComponent),
        Case("a//b", .emptyComponent),
        Case("a/", .emptyComponent),
        Case("a/b/", .emptyComponent),
        // nul
        Case("a\u{0}b", .nul),
        Case("\u{0}", .nul),
        // controlCharacter
        Case("a\nb", .controlCharacter),
        Case("bell\u{7}", .controlCharacter),
        Case("esc\u{1B}[31mred", .controlCharacter),
        Case("del\u{7F}", .controlCharacter),
        Case("c1\u{85}", .controlCharacter),
        Case("tab\there", .controlCharacter),
        Case("cr\r\nlf", .controlCharacter),
        // tooLong
        Case(longComponent + "a", .tooLong),
        Case("x/" + String(repeating: "é", count: 128), .tooLong),  // 256 bytes
        Case(Array(repeating: "abcdefg", count: 513).joined(separator: "/"), .tooLong),  // 4103 bytes
        // reserved
        Case(".ferry-staging", .reserved),
        Case(".ferry-staging/x", .reserved),
        Case("a/.ferry-staging/b", .reserved),
        Case("a/.ferry-staging", .reserved),
        // ... as a case-insensitive file system sees it (ext4 casefold folds fully: long s, ligatures)
        Case(".FERRY-STAGING/x", .reserved),
        Case(".Ferry-Staging", .reserved),
        Case(".ferry-\u{17F}taging/x", .reserved),
        Case(".ferry-\u{FB05}aging/x", .reserved),
        Case(".ferry-\u{FB06}aging", .reserved),
        Case(".ferry\u{200D}-staging/x", .reserved),  // default-ignorables left out
        Case(".ferry-\u{AD}staging", .reserved),
        Case(".ferry-stag\u{131}ng/x", .reserved),  // exFAT up-cases the dotless i to I
        Case(".ferry-\u{E0041}staging", .reserved),
        Case("\u{200D}", ["\u{200D}"]),
        Case(".ferry-stagin", [".ferry-stagin"]),
        Case(".ferry-stagings", [".ferry-stagings"]),
        Case(".ferry-st\u{E1}ging", [".ferry-st\u{E1}ging"]),
        // bidiControl
        Case("invoice\u{202E}gpj.exe", .bidiControl),
        Case("a\u{200E}", .bidiControl),
        Case("a\u{200F}", .bidiControl),
        Case("\u{202A}x", .bidiControl),
        Case("\u{2066}x\u{2069}", .bidiControl),
        Case("arabic\u{061C}mark", .bidiControl),
        // "/" followed by a combining mark is one Character but still a separator.
        Case("a/\u{301}b", ["a", "\u{301}b"]),
        Case("a/\u{301}/..", .parentReference),
    ]

    @Test(arguments: cases) func rule(_ c: Case) {
        #expect(NameValidator.components(of: c.path) == c.expected)
    }

    @Test func descriptionsNameTheProblem() {
        #expect(NameError.parentReference.description.contains(".."))
        #expect(NameError.reserved.description.contains(".ferry-staging"))
        #expect(NameError.absolute.description.contains("absolute"))
        let all: [NameError] = [
            .empty, .absolute, .parentReference, .emptyComponent, .nul, .controlCharacter, .tooLong, .reserved,
            .bidiControl,
        ]
        #expect(Set(all.map(\.description)).count == all.count)
    }

    /// 3000 random strings from an alphabet rich in separators, dots and dangerous characters: the validator
    /// never traps, and whatever it accepts is a list of safe components that spell the path.
    @Test func randomStringsNeverTrapAndAcceptedComponentsAreSafe() {
        let alphabet: [Unicode.Scalar] = [
            "/", "/", "/", ".", ".", ".", "a", "b", "Z", " ", "\\", "-", "\u{0}", "\n", "\u{1B}", "\u{7F}", "\u{85}",
            "\u{202E}", "\u{2066}", "\u{200F}", "\u{301}", "é", "日", "📷", "\u{FEFF}", "\u{2028}",
        ]
        var generator = SplitMix64(seed: 0xFE44)
        var accepted = 0
        for _ in 0..<3000 {
            let length = Int.random(in: 0...24, using: &generator)
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length { scalars.append(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]) }
            let path = String(scalars)
            guard case .success(let components) = NameValidator.components(of: path) else { continue }
            accepted += 1
            #expect(components.joined(separator: "/").utf8.elementsEqual(path.utf8))
            for component in components {
                #expect(!component.isEmpty)
                #expect(!component.utf8.elementsEqual(".".utf8) && !component.utf8.elementsEqual("..".utf8))
                #expect(!component.utf8.contains(UInt8(ascii: "/")) && !component.utf8.contains(0))
                #expect(component.utf8.count <= 255)
                #expect(!component.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" })
            }
        }
        #expect(accepted > 100)  // the alphabet really exercises the accepting path too
    }
}
