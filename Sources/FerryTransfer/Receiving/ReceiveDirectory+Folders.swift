import FerryStateMachines
import FerrySystem

extension ReceiveDirectory {
    /// Creates the folders of an offer's folders section (PROTOCOL.md 11.3), each given as its components (already
    /// validated by `NameValidator`; checked again here in NFC, as a file's name is), with every folder on the way:
    /// each component is opened, or created (mode 0755 less the umask), without following a symbolic link (a link
    /// or a file on the way fails that folder with ELOOP or ENOTDIR, and nothing outside the directory is touched).
    /// A folder that is there already is kept as it is. Then every directory on those paths is synced once, deepest
    /// first, so that the new names survive a crash as a published file's do. Returns one result per folder: the
    /// path created or found, relative to the receive directory, as spelled on disk.
    public func createFolders(_ folders: [[String]]) -> [Result<String, SystemError>] {
        var directories = PublishingDirectories(root: root)
        defer { directories.close() }
        var results: [Result<String, SystemError>] = []
        var paths: [Int: [String]] = [:]
        for (index, asked) in folders.enumerated() {
            let components = asked.map(Self.publishedForm)
            let joined = components.joined(separator: "/")
            guard !components.isEmpty, case .success(let checked) = NameValidator.components(of: joined),
                checked == components
            else {
                let call = "mkdir(\(String(reflecting: joined))) in \(path) (not a valid received name)"
                results.append(.failure(SystemError(call: call, errno: .invalidArgument)))
                continue
            }
            do throws(SystemError) {
                let (_, path) = try directories.open(components)
                paths[index] = [""] + path
                results.append(.success(path.last ?? ""))
            } catch {
                results.append(.failure(error))
            }
        }
        var failed: [String: SystemError] = [:]
        for path in Set(paths.values.joined()).sorted(by: { $0.utf8.count > $1.utf8.count }) {
            do throws(SystemError) {
                try directories.sync(path)
                recorder?(.syncDirectory(path.isEmpty ? "." : path))
            } catch {
                failed[path] = error
            }
        }
        for (index, path) in paths {
            if let failure = path.lazy.compactMap({ failed[$0] }).first { results[index] = .failure(failure) }
        }
        return results
    }
}
