import FerrySecurity
import FerryWire
import Foundation
import Testing

@testable import FerryCLI

/// `ferry id` and `ferry trust ...` run in-process in a temporary config home: output, exit codes, the file.
@Suite struct TrustCommandTests {
    let alice = testDeviceID([1])
    let bob = testDeviceID([2])
    let noon = Date(timeIntervalSince1970: 1_796_040_000)

    @Test func listEmpty() async throws {
        let home = try ConfigHome()
        #expect(
            await home.run(["trust", "list"])
                == FerryRun(
                    code: .success, stdout: "",
                    stderr: "No trusted peers; pin one with 'ferry trust add <id> --name <name>'.\n"))
        #expect(await home.run(["trust", "list", "--json"]) == FerryRun(code: .success, stdout: "", stderr: ""))
    }

    @Test func addListRemoveRoundTrip() async throws {
        let home = try ConfigHome()
        let added = await home.run(["trust", "add", alice.description.lowercased(), "--name", "alice"])
        #expect(added == FerryRun(code: .success, stdout: "Trusted 'alice' (\(alice)).\n", stderr: ""))
        #expect(
            await home.run(["trust", "add", bob.hex.uppercased()])
                == FerryRun(code: .success, stdout: "Trusted \(bob).\n", stderr: ""))
        #expect(
            await home.run(["trust", "add", alice.hex])
                == FerryRun(code: .success, stdout: "Already trusted: 'alice' (\(alice)).\n", stderr: ""))
        #expect(
            await home.run(["trust", "add", alice.hex, "--name", "alice-laptop"])
                == FerryRun(
                    code: .success, stdout: "Renamed \(alice) from 'alice' to 'alice-laptop'.\n", stderr: ""))
        let list = await home.run(["trust", "list"])
        #expect(list.code == .success)
        let names = list.stdout.split(separator: "\n").map { $0.prefix(14) }
        #expect(names == ["NAME          ", "alice-laptop  ", "-             "])
        #expect(
            await home.run(["trust", "remove", alice.description])
                == FerryRun(code: .success, stdout: "No longer trusted: 'alice-laptop' (\(alice)).\n", stderr: ""))
        #expect(
            await home.run(["trust", "remove", alice.hex])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: \(alice) is not trusted; see 'ferry trust list'\n"))
        #expect(try home.store.load().map(\.deviceID) == [bob])
    }

    @Test func listShowsEveryPeerWithEscapedNames() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "al\u{1B}[2Jice", now: noon)
        try home.store.pin(bob, name: "bob", now: noon)
        #expect(
            await home.run(["trust", "list"])
                == FerryRun(
                    code: .success,
                    stdout: """
                        NAME            KIND       ADDED       DEVICE ID
                        al\\u{1B}[2Jice  ferry      2026-11-30  \(alice)
                        bob             ferry      2026-11-30  \(bob)

                        """,
                    stderr: ""))
        let json = await home.run(["trust", "list", "--json"])
        #expect(
            json.stdout == """
                {"event":"trustedPeer","deviceID":"\(alice)","hex":"\(alice.hex)","name":"al\\u001b[2Jice","added":"2026-11-30T12:00:00Z","kind":"ferry"}
                {"event":"trustedPeer","deviceID":"\(bob)","hex":"\(bob.hex)","name":"bob","added":"2026-11-30T12:00:00Z","kind":"ferry"}

                """)
    }

    @Test func removeByUniquePrefix() async throws {
        let home = try ConfigHome()
        // Both IDs begin with the same 8 base32 characters (5 equal bytes); the ninth differs.
        let first = testDeviceID([9, 9, 9, 9, 9, 0x10])
        let second = testDeviceID([9, 9, 9, 9, 9, 0x90])
        try home.store.pin(first, name: "first", now: noon)
        try home.store.pin(second, name: "second", now: noon)
        let shared = String(first.base32.prefix(8))
        #expect(second.base32.hasPrefix(shared))
        #expect(
            await home.run(["trust", "remove", shared.lowercased()])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: '\(shared.lowercased())' begins 2 trusted device IDs: 'first' (\(first)),"
                        + " 'second' (\(second)); give more characters\n"))
        #expect(try home.store.load().count == 2)
        let unique = String(second.description.prefix(11))
        #expect(
            await home.run(["trust", "remove", unique])
                == FerryRun(code: .success, stdout: "No longer trusted: 'second' (\(second)).\n", stderr: ""))
        #expect(
            await home.run(["trust", "remove", String(first.hex.prefix(10))])
                == FerryRun(code: .success, stdout: "No longer trusted: 'first' (\(first)).\n", stderr: ""))
        #expect(
            await home.run(["trust", "remove", shared])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: no trusted peer is named '\(shared)' nor has a device ID that begins with it; see"
                        + " 'ferry trust list'\n"))
    }

    /// Issue 28, 8: `trust remove NAME` failed where `trust add NAME` worked; remove takes the same forms: a whole ID,
    /// the name it is pinned under, the short ID ferry prints.
    @Test func removeTakesWhatAddTakes() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice", now: noon)
        try home.store.pin(bob, name: "bob", now: noon)
        #expect(
            await home.run(["trust", "remove", "alice"])
                == FerryRun(code: .success, stdout: "No longer trusted: 'alice' (\(alice)).\n", stderr: ""))
        #expect(
            await home.run(["trust", "remove", bob.shortDescription])
                == FerryRun(code: .success, stdout: "No longer trusted: 'bob' (\(bob)).\n", stderr: ""))
        #expect(try home.store.load().isEmpty)
        #expect(
            await home.run(["trust", "remove", "carol"])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: no trusted peer is named 'carol'; see 'ferry trust list' (a device ID is given"
                        + " whole, or by its first 8 characters or more)\n"))
        #expect(
            await home.run(["trust", "remove", "\u{1B}[31mABCDEFGH"])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: no trusted peer is named '\\u{1B}[31mABCDEFGH'; see 'ferry trust list' (a device ID"
                        + " is given whole, or by its first 8 characters or more)\n"))
    }

    /// Issue 28, 8: `--trusted-only` suggests `ferry trust add FVQN-OCPD`, which was refused as no valid device ID;
    /// it now looks for that peer on the network (which needs a terminal, to compare the codes).
    @Test func addTakesTheShortIDThatFerrySuggests() async throws {
        let home = try ConfigHome()
        let run = await home.run(["trust", "add", alice.shortDescription, "--wait", "0"])
        #expect(run.code == .failure, "\(run)")
        #expect(run.stderr.hasPrefix("Error: pinning a peer by name compares its pairing code"), "\(run)")
        #expect(try home.store.load().isEmpty)
    }

    @Test func aNameAlreadyPinnedToAnotherIDIsRefused() async throws {
        let home = try ConfigHome()
        try home.store.pin(alice, name: "alice", now: noon)
        #expect(
            await home.run(["trust", "add", bob.description, "--name", "alice"])
                == FerryRun(
                    code: .failure, stdout: "",
                    stderr: "Error: 'alice' is pinned to \(alice); remove it first with 'ferry trust remove"
                        + " \(alice.shortDescription)'\n"))
        #expect(try home.store.load().map(\.deviceID) == [alice])
    }

    @Test func damagedFileIsReportedWithItsPath() async throws {
        let home = try ConfigHome()
        try FileManager.default.createDirectory(atPath: home.ferryDirectory, withIntermediateDirectories: true)
        try Data("{\"broken\n".utf8).write(to: home.store.file)
        let message =
            "Error: \(home.store.file.path) is damaged (line 1: not a trusted peer entry); repair the line, or"
            + " remove the file to forget every trusted peer and pin them again with 'ferry trust add'\n"
        for arguments in [["trust", "list"], ["trust", "add", alice.hex], ["trust", "remove", alice.hex]] {
            #expect(await home.run(arguments) == FerryRun(code: .failure, stdout: "", stderr: message))
        }
    }

    @Test func idPrintsTheDeviceIDNameAndDirectory() async throws {
        let home = try ConfigHome()
        let text = await home.run(["id", "--name", "zoe"])
        let id = try DeviceIdentityStore(environment: home.environment).load()
        // The fingerprint LocalSend peers see: the SHA-256 of localsend-identity.pem's certificate, upper-case hex.
        let localSend = try DeviceIdentityStore(environment: home.environment).loadLocalSendIdentity()
        #expect(localSend.fingerprint == LocalSendFingerprint(certificateDER: localSend.certificateDER))
        #expect(
            text
                == FerryRun(
                    code: .success,
                    stdout: "Device ID:  \(id)\nLocalSend:  \(localSend.fingerprint)\nName:       zoe\n"
                        + "Config:     \(home.ferryDirectory)\n",
                    stderr: ""))
        #expect(
            await home.run(["--name", "zoe", "id", "--json"]).stdout
                == "{\"event\":\"identity\",\"deviceID\":\"\(id)\",\"hex\":\"\(id.hex)\",\"name\":\"zoe\",\"configDirectory\":"
                + "\"\(home.ferryDirectory)\",\"localSendFingerprint\":\"\(localSend.fingerprint)\"}\n")
        // The same ID every time, and the one the trust store would pin.
        #expect(try IdCommand.deviceID(environment: home.environment) == id)
        let plain = await home.run(["id"]).stdout
        #expect(
            plain.hasPrefix(
                "Device ID:  \(id)\nLocalSend:  \(localSend.fingerprint)\nName:       \(GlobalOptions.hostName())\n"))
    }
}
