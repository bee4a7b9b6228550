import Testing

@testable import FerryCLI

/// The default receive directory: `XDG_DOWNLOAD_DIR` from user-dirs.dirs, else ~/Downloads.
@Suite struct DownloadDirectoryTests {
    static let typical = """
        # This file is written by xdg-user-dirs-update
        # If you want to change or add directories, just edit the line you're
        # interested in. All local changes will be retained on the next run.
        # Format is XDG_xxx_DIR="$HOME/yyy", where yyy is a shell-escaped
        # homedir-relative path, or XDG_xxx_DIR="/yyy", where /yyy is an
        # absolute path. No other format is supported.
        #
        XDG_DESKTOP_DIR="$HOME/Desktop"
        XDG_DOWNLOAD_DIR="$HOME/Téléchargements"
        XDG_TEMPLATES_DIR="$HOME/Templates"

        """

    @Test func homeRelative() {
        #expect(DownloadDirectory.parseUserDirs(Self.typical, home: "/home/zoe") == "/home/zoe/Téléchargements")
        #expect(
            DownloadDirectory.parseUserDirs("XDG_DOWNLOAD_DIR=\"${HOME}/dl\"", home: "/home/zoe") == "/home/zoe/dl")
        #expect(DownloadDirectory.parseUserDirs("XDG_DOWNLOAD_DIR=\"$HOME\"", home: "/home/zoe") == "/home/zoe")
        #expect(DownloadDirectory.parseUserDirs("XDG_DOWNLOAD_DIR=\"$HOME/x\"", home: "/") == "/x")
    }

    @Test func absoluteAndEscaped() {
        #expect(DownloadDirectory.parseUserDirs("XDG_DOWNLOAD_DIR=\"/data/in\"", home: "/h") == "/data/in")
        #expect(
            DownloadDirectory.parseUserDirs(#"XDG_DOWNLOAD_DIR="$HOME/My \"Stuff\" \$5 \\ x""#, home: "/h")
                == #"/h/My "Stuff" $5 \ x"#)
        #expect(
            DownloadDirectory.parseUserDirs("  export XDG_DOWNLOAD_DIR=\"/in\"  # mine", home: "/h") == "/in")
    }

    @Test func lastAssignmentWins() {
        let text = "XDG_DOWNLOAD_DIR=\"/first\"\nXDG_DOWNLOAD_DIR=\"/second\"\n"
        #expect(DownloadDirectory.parseUserDirs(text, home: "/h") == "/second")
    }

    @Test(arguments: [
        "",
        "XDG_DESKTOP_DIR=\"$HOME/Desktop\"",
        "# XDG_DOWNLOAD_DIR=\"/commented\"",
        "XDG_DOWNLOAD_DIR=$HOME/unquoted",
        "XDG_DOWNLOAD_DIR=\"relative/path\"",
        "XDG_DOWNLOAD_DIR=\"$OTHER/x\"",
        "XDG_DOWNLOAD_DIR=\"$HOMEx/y\"",
        "XDG_DOWNLOAD_DIR=\"/x/$(rm -rf ~)\"",
        "XDG_DOWNLOAD_DIR=\"/x/`id`\"",
        "XDG_DOWNLOAD_DIR=\"/unterminated",
        "XDG_DOWNLOAD_DIR=\"/a\" trailing",
        "XDG_DOWNLOAD_DIR=\"/a\\n\"",
    ])
    func unsupportedFormsAreIgnored(text: String) {
        #expect(DownloadDirectory.parseUserDirs(text, home: "/home/zoe") == nil)
    }

    @Test func resolveReadsTheConfigFileElseFallsBack() {
        let files = ["/cfg/user-dirs.dirs": "XDG_DOWNLOAD_DIR=\"$HOME/Incoming\"\n"]
        let read: (String) -> String? = { files[$0] }
        #expect(
            DownloadDirectory.resolve(environment: ["HOME": "/home/zoe", "XDG_CONFIG_HOME": "/cfg"], readFile: read)
                == "/home/zoe/Incoming")
        // Without XDG_CONFIG_HOME the file is ~/.config/user-dirs.dirs, which does not exist here.
        #expect(DownloadDirectory.resolve(environment: ["HOME": "/home/zoe/"], readFile: read) == "/home/zoe/Downloads")
        // A relative XDG_CONFIG_HOME is ignored, as the spec says.
        #expect(
            DownloadDirectory.resolve(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "cfg"], readFile: read)
                == "/h/Downloads")
        let homeFile = ["/h/.config/user-dirs.dirs": "XDG_DOWNLOAD_DIR=\"/srv/in\""]
        #expect(DownloadDirectory.resolve(environment: ["HOME": "/h"], readFile: { homeFile[$0] }) == "/srv/in")
    }
}
