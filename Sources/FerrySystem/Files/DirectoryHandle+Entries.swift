import Glibc

extension DirectoryHandle {
    /// The names in the directory, without "." and "..", in the order the file system lists them
    /// (`openat(2)` of "." for a private read position, then `fdopendir(3)`, `readdir(3)`, `closedir(3)`).
    /// Names that are not valid UTF-8 are left out: a `String` cannot name them exactly (`listing()` reports them).
    ///
    /// Why not `fdopendir(dup(fd))`: a duplicate shares the directory's read position, so a second listing (or
    /// two concurrent ones) would start where the last one ended; reopening "." gives each listing its own.
    public func entries() throws(SystemError) -> [String] {
        try listing().names
    }

    /// `entries()`, and the names left out because they are not valid UTF-8, in `undecodable`: each decoded with
    /// U+FFFD for the bytes that are not, to be shown to a person (it no longer names the file exactly).
    public func listing() throws(SystemError) -> (names: [String], undecodable: [String]) {
        let describeOpen = describe("openat", ".")
        let listing = try descriptor.run(describeOpen) { $0._openAt(".", flags: O_RDONLY | O_DIRECTORY) }
        guard let stream = fdopendir(listing.rawValue) else {
            let errno = Errno.current
            listing.close()
            throw SystemError(call: CallDescription.call("fdopendir", on: path), errno: errno)
        }
        defer { closedir(stream) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \.d_name) ?? 0
        var names: [String] = []
        var undecodable: [String] = []
        while true {
            Glibc.errno = 0
            guard let entry = readdir(stream) else {
                let errno = Errno.current
                guard errno.rawValue == 0 else {
                    throw SystemError(call: CallDescription.call("readdir", on: path), errno: errno)
                }
                return (names, undecodable)
            }
            let cName = UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self)
            guard let name = String(validatingCString: cName) else {
                undecodable.append(
                    String(decoding: UnsafeRawBufferPointer(start: cName, count: strlen(cName)), as: UTF8.self))
                continue
            }
            guard name != ".", name != ".." else { continue }
            names.append(name)
        }
    }
}
