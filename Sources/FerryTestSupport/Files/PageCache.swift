import Foundation
import Glibc

/// How much of a file is in the page cache (`mincore(2)` over a read-only mapping), and whether a path is on tmpfs
/// (where a file's pages are the file itself and are never dropped).
///
/// Why: the receiver's write-behind promises that a large received file does not stay whole in the page cache;
/// only the kernel can say which of its pages are resident.
public enum PageCache {
    /// Resident bytes (whole pages) of the file at `path`, and its size; with `range`, only of the pages that hold
    /// some byte of `range` (clamped to the file).
    public static func residentBytes(path: String, in range: Range<Int>? = nil) throws -> (resident: Int, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestSupportError.systemCall("open \(path)", errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw TestSupportError.systemCall("fstat \(path)", errno: errno) }
        let size = Int(status.st_size)
        guard size > 0 else { return (0, 0) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapping != MAP_FAILED else {
            throw TestSupportError.systemCall("mmap \(path)", errno: errno)
        }
        defer { munmap(mapping, size) }
        var vector = [UInt8](repeating: 0, count: (size + page - 1) / page)
        guard mincore(mapping, size, &vector) == 0 else {
            throw TestSupportError.systemCall("mincore \(path)", errno: errno)
        }
        let pages = range.map { ($0.lowerBound / page)..<min(($0.upperBound + page - 1) / page, vector.count) }
        let counted = pages.map { vector[$0.clamped(to: 0..<vector.count)] } ?? vector[...]
        return (counted.reduce(0) { $0 + Int($1 & 1) } * page, size)
    }

    /// True when `path` is on a tmpfs: the file system type of the longest mount point in /proc/self/mounts that
    /// holds the resolved path (Swift's Glibc has no `statfs`).
    public static func isTmpfs(path: String) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return false }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (point: String, type: String)?
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1]).replacingOccurrences(of: "\\040", with: " ")
            let holds = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if holds, point.count >= (best?.point.count ?? -1) { best = (point, String(fields[2])) }
        }
        return best?.type == "tmpfs"
    }
}
