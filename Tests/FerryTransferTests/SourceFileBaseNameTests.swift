import Foundation
import Testing

@testable import FerryTransfer

/// The name a file named on the command line is sent under: `SourceFile.baseName(of:)` splits the text for a plain
/// last component and agrees with Foundation's standardized last component on every form of path.
@Suite struct SourceFileBaseNameTests {
    @Test(arguments: [
        "photo.jpg", "dir/photo.jpg", "/tmp/a/photo.jpg", "dir/sub/", "dir//x", "/a/../b", "./c", "a/./d",
        "na%41me", "été.txt", "a b/c d", "x/.", "x/..", ".", "..", "/", "//", "a/b/../..", ".hidden", "dir/.hidden/",
    ])
    func baseNameIsFoundationsStandardizedLastComponent(_ path: String) {
        let foundation = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
        #expect(SourceFile.baseName(of: path) == foundation, "\(path)")
    }
}
