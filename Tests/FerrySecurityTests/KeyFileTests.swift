@testable import FerrySecurity
import FerryTestSupport
import Foundation
import Glibc
import Testing

@Suite("KeyFile")
struct KeyFileTests {
    /// A key file owned by another user is refused even at mode 0600: that user can read (and replace) the key.
    /// Needs root to give a file away; the test bed runs as root.
    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"))
    func aKeyFileOwnedByAnotherUserIsRefusedWithWhatToDo() throws {
        let directory = try TemporaryDirectory(prefix: "ferry-keyfile")
        defer { directory.remove() }
        let path = directory.path + "/identity.pem"
        try KeyFile.create(Array("key".utf8), directory: directory.path, fileName: "identity.pem")
        #expect(try KeyFile.read(path: path, what: "identity") == Array("key".utf8))
        #expect(chown(path, 65534, 65534) == 0)
        do {
            _ = try KeyFile.read(path: path, what: "identity")
            Issue.record("a key file owned by uid 65534 was accepted")
        } catch {
            let message = "\(error)"
            #expect(message.contains(path) && message.contains("owned by user 65534"), "\(message)")
            #expect(message.contains("chown"), "\(message)")
        }
    }
}
