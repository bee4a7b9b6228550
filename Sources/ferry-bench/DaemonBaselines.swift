import FerryTestSupport
import Foundation
import Glibc

/// `scp` into a local `sshd`: throwaway host and user keys and both configurations in a temporary directory.
///
/// Why this way: nothing of the user's `~/.ssh` is read or written (`-F` with our own client configuration, our
/// own identity, `IdentityAgent none`, a temporary known_hosts, StrictHostKeyChecking off), and it works as any user:
/// the server runs as the current user, who logs in as themselves. As root, sshd insists on its privilege
/// separation directory /run/sshd; where that is missing, sshd runs in a mount namespace of its own with a tmpfs on
/// /run (`unshare --mount`), so the machine is left as it was. As another user, sshd cannot read /etc/shadow and
/// without PAM takes every account for locked, so it runs with `UsePAM yes` there (PAM's session modules then cost
/// that end a few milliseconds per connection). scp uses its default protocol (SFTP since OpenSSH 9.0), served by
/// `internal-sftp`.
struct SecureCopyBaseline {
    static let cipher = "aes128-gcm@openssh.com"

    let directory: URL
    let user: String

    /// Why scp cannot run here, or nil.
    static var unavailable: String? {
        if !FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") {
            return "sshd is missing (install the Debian package openssh-server)"
        }
        for tool in ["scp", "ssh-keygen"] where ExecutableSearch.path(of: tool) == nil {
            return "\(tool) is missing (install openssh-client)"
        }
        if getuid() == 0, !FileManager.default.fileExists(atPath: "/run/sshd"),
            ExecutableSearch.path(of: "unshare") == nil
        {
            return "sshd as root needs /run/sshd, or unshare (util-linux) to give it a private one"
        }
        return nil
    }

    /// Writes keys and configurations into `directory` (created).
    init(in directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else {
            throw BenchFailure("scp: no passwd entry for uid \(getuid())")
        }
        user = String(cString: name)
        for key in ["host_key", "user_key"] {
            try FerryProcess.run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "ferry-bench", "-f", path(key)])
                .requireSuccess()
        }
        try FileManager.default.copyItem(atPath: path("user_key.pub"), toPath: path("authorized_keys"))
        try """
        HostKey \(path("host_key"))
        AuthorizedKeysFile \(path("authorized_keys"))
        StrictModes no
        PidFile none
        UsePAM \(getuid() == 0 ? "no" : "yes")
        PermitRootLogin prohibit-password
        PasswordAuthentication no
        KbdInteractiveAuthentication no
        UseDNS no
        PrintMotd no
        PrintLastLog no
        Subsystem sftp internal-sftp
        LogLevel INFO

        """.write(toFile: path("sshd_config"), atomically: true, encoding: .utf8)
        try """
        Host *
          User \(user)
          IdentityFile \(path("user_key"))
          IdentitiesOnly yes
          IdentityAgent none
          StrictHostKeyChecking no
          UserKnownHostsFile \(path("known_hosts"))
          GlobalKnownHostsFile /dev/null
          BatchMode yes
          ControlMaster no
          LogLevel ERROR

        """.write(toFile: path("ssh_config"), atomically: true, encoding: .utf8)
    }

    /// `sshd -i` for one connection on stdin and stdout, logging to stderr.
    var daemon: [String] {
        let sshd = ["/usr/sbin/sshd", "-i", "-e", "-f", path("sshd_config")]
        guard getuid() == 0, !FileManager.default.fileExists(atPath: "/run/sshd") else { return sshd }
        let script =
            "mount -t tmpfs -o mode=0755,size=64k ferry-bench-sshd /run && mkdir /run/sshd && exec \"$0\" \"$@\""
        return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script] + sshd
    }

    /// `scp -c aes128-gcm@openssh.com [-r] [-C] SOURCES USER@HOST:DESTINATION` on `port`.
    func client(
        port: UInt16, host: String, sources: [String], destination: URL, recursive: Bool = false, compress: Bool = false
    ) -> [String] {
        ["scp", "-q", "-F", path("ssh_config"), "-c", Self.cipher, "-P", String(port)] + (recursive ? ["-r"] : [])
            + (compress ? ["-C"] : []) + sources + ["\(user)@\(host):\(destination.path)"]
    }

    private func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }
}

/// An `rsync` daemon with a temporary configuration and one writable module, started per connection (rsync runs
/// as an inetd daemon when its stdin is a socket); clients push with `rsync SOURCES rsync://HOST:PORT/bench/`.
struct RsyncDaemonBaseline {
    let configuration: URL
    /// The module's directory: what clients send lands here.
    let destination: URL

    /// Why the rsync daemon cannot run here, or nil.
    static var unavailable: String? {
        ExecutableSearch.path(of: "rsync") == nil ? "rsync is missing (install the Debian package rsync)" : nil
    }

    /// Why `rsync --fsync` cannot run here (rsync before 3.2.4 has no such option), or nil.
    static let fsyncUnavailable: String? = {
        guard let help = try? FerryProcess.run("rsync", ["--help"]).stdout else { return "rsync --help failed" }
        return help.contains("--fsync") ? nil : "the installed rsync has no --fsync (it came in rsync 3.2.4)"
    }()

    /// `-z` with zstd at level 3 where rsync has zstd (`--compress-choice=zstd --compress-level=3`), else plain `-z`.
    static let compressOptions: (options: [String], text: String) = {
        let version = (try? FerryProcess.run("rsync", ["--version"]).stdout) ?? ""
        let compressors = version.split(separator: "\n").drop { !$0.hasPrefix("Compress list:") }.dropFirst().first
        if compressors?.split(separator: " ").contains("zstd") == true {
            return (["-z", "--compress-choice=zstd", "--compress-level=3"], "rsync -z (zstd level 3)")
        }
        return (["-z"], "rsync -z (zlib: this rsync has no zstd)")
    }()

    /// Writes the configuration into `directory`; the module writes into `destination` (both created).
    init(in directory: URL, destination: URL) throws {
        self.destination = destination
        configuration = directory.appendingPathComponent("rsyncd.conf")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        let owner = getuid() == 0 ? "uid = 0\ngid = 0\n" : ""
        try """
        use chroot = no
        reverse lookup = no
        log file = \(directory.appendingPathComponent("rsyncd.log").path)
        \(owner)
        [bench]
        path = \(destination.path)
        read only = no

        """.write(to: configuration, atomically: true, encoding: .utf8)
    }

    /// `rsync --daemon` for one connection on stdin and stdout.
    var daemon: [String] {
        ["rsync", "--daemon", "--config=\(configuration.path)"]
    }

    /// `rsync OPTIONS SOURCES rsync://HOST:PORT/bench/` (a source ending in "/" sends a directory's contents).
    func client(port: UInt16, host: String, sources: [String], options: [String] = []) -> [String] {
        ["rsync"] + options + sources + ["rsync://\(host):\(port)/bench/"]
    }
}
