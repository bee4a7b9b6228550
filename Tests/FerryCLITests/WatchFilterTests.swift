import FerrySystem
import Testing

@testable import FerryCLI

/// Which files `ferry watch` sends, and that it sends each version once.
@Suite struct WatchFilterTests {
    @Test(arguments: [
        ".hidden", ".#report.txt", "#report.txt#", "notes.txt~", "data.tmp", "movie.mkv.part", ".notes.txt.swp",
        "notes.swp", "setup.exe.crdownload", "DATA.TMP", "Movie.PART", "", ".", "..",
    ])
    func skipped(name: String) {
        #expect(WatchFilter.isSkipped(name))
    }

    @Test(arguments: [
        "photo.jpg", "report.pdf", "tmp", "part", "notes.tmp.txt", "a~b", "archive.partial", "swp.txt", "x#", "~x",
        "Zoë.png",
    ])
    func sent(name: String) {
        #expect(!WatchFilter.isSkipped(name))
    }

    static let time = FileTimestamp(seconds: 1_700_000_000, nanoseconds: 5)

    /// `admit` outside `#expect`, which cannot call a mutating method.
    static func admit(_ files: inout WatchedFiles, _ version: WatchedFiles.Version, kind: FileStatus.Kind) -> Bool {
        files.admit(version, kind: kind)
    }

    @Test func eachVersionOnce() {
        var files = WatchedFiles()
        let photo = WatchedFiles.Version(name: "photo.jpg", size: 10, modified: Self.time)
        #expect(Self.admit(&files, photo, kind: .regular))
        #expect(!Self.admit(&files, photo, kind: .regular))
        // Written again: another size or time is another version.
        #expect(Self.admit(&files, .init(name: "photo.jpg", size: 11, modified: Self.time), kind: .regular))
        let later = FileTimestamp(seconds: 1_700_000_000, nanoseconds: 6)
        #expect(Self.admit(&files, .init(name: "photo.jpg", size: 11, modified: later), kind: .regular))
        #expect(files.count == 3)
    }

    @Test func filesThereAtStartAreNotSent() {
        var files = WatchedFiles()
        let old = WatchedFiles.Version(name: "old.txt", size: 3, modified: Self.time)
        files.remember(old)
        #expect(!Self.admit(&files, old, kind: .regular))
        #expect(Self.admit(&files, .init(name: "old.txt", size: 4, modified: Self.time), kind: .regular))
    }

    @Test func onlyRegularFilesThatAreNotSkipped() {
        var files = WatchedFiles()
        #expect(!Self.admit(&files, .init(name: "dir", size: 0, modified: Self.time), kind: .directory))
        #expect(!Self.admit(&files, .init(name: "link", size: 0, modified: Self.time), kind: .symlink))
        #expect(!Self.admit(&files, .init(name: "fifo", size: 0, modified: Self.time), kind: .other))
        #expect(!Self.admit(&files, .init(name: "x.part", size: 1, modified: Self.time), kind: .regular))
        #expect(files.count == 0)
    }
}
