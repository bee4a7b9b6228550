import Foundation
import Testing

@testable import FerryCLI

/// `--pin-file` (receive and send to LocalSend): the PIN is the file's first line, and a file other users can read
/// (by its group or other bits) is refused with the chmod that fixes it.
@Suite struct PinFileTests {
    private static func file(_ text: String, mode: mode_t) throws -> (path: String, remove: () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-pin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("pin").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, mode)
        return (path, { try? FileManager.default.removeItem(at: directory) })
    }

    @Test func thePinIsTheFirstLineOfAPrivateFile() throws {
        let pin = try Self.file(" 4821 \nsecond line\n", mode: 0o600)
        defer { pin.remove() }
        #expect(try ReceiveCommand.readPin(pin.path) == "4821")
    }

    @Test(arguments: [0o640, 0o604, 0o644] as [mode_t])
    func aFileOtherUsersCanReadIsRefused(mode: mode_t) throws {
        let pin = try Self.file("4821\n", mode: mode)
        defer { pin.remove() }
        #expect {
            _ = try ReceiveCommand.readPin(pin.path)
        } throws: { error in
            "\(error)".contains("other users can read it") && "\(error)".contains("chmod 600")
        }
    }
}
