extension DeviceIdentity {
    /// Loads `identity.pem` from `directory`, creating the directory (mode 0700) and the file (mode 0600) when
    /// missing.
    ///
    /// Two processes starting at once agree on one identity: the file is written under a temporary name and linked
    /// into place with `link(2)`, which never replaces; the loser reads the winner's file. A file that other users
    /// can read is refused (as ssh refuses such keys): the key would no longer be secret.
    public static func loadOrCreate(directory: String) throws(SecurityError) -> DeviceIdentity {
        let path = directory + "/" + fileName
        if let identity = try load(path: path) { return identity }
        try KeyFile.create(try generate().pem(), directory: directory, fileName: fileName)
        guard let stored = try load(path: path) else { throw .identity("\(path) vanished while it was created") }
        return stored
    }

    /// The identity in `path`, nil when there is no such file.
    static func load(path: String) throws(SecurityError) -> DeviceIdentity? {
        guard let bytes = try KeyFile.read(path: path, what: "identity") else { return nil }
        do {
            return try DeviceIdentity(pem: bytes)
        } catch {
            throw .identity(
                "\(path) is damaged (\(error)); remove it to create a new identity (peers that trusted"
                    + " this device will have to trust it again)")
        }
    }
}
