import Foundation
import Testing

@testable import FerryCLI

/// `FERRY_SESSION`, `FERRY_NAME` and `FERRY_INTERFACE` give the global options their defaults; a flag wins over its
/// variable; a bad variable is a usage error that names the variable, not the flag.
@Suite struct EnvironmentDefaultsTests {
    static let environment = [
        "FERRY_SESSION": "lab", "FERRY_NAME": "Zoë's laptop", "FERRY_INTERFACE": "lo, veth0",
    ]

    @Test func variablesGiveTheDefaultsWhenNoFlagIsGiven() throws {
        let command = try #require(try parseCommand(["peers"], environment: Self.environment) as? PeersCommand)
        #expect(command.global.session == "lab")
        #expect(command.global.name == "Zoë's laptop")
        #expect(command.global.displayName == "Zoë's laptop")
        #expect(command.global.interfaces == ["lo", "veth0"])
    }

    @Test func flagsWinOverVariables() throws {
        let command = try #require(
            try parseCommand(
                ["--session", "home", "peers", "--name=desk", "--interface", "eth0"], environment: Self.environment)
                as? PeersCommand)
        #expect(command.global.session == "home")
        #expect(command.global.name == "desk")
        #expect(command.global.interfaces == ["eth0"])
        // A flag wins even over an invalid variable, which then is not looked at.
        let overridden = try #require(
            try parseCommand(["peers", "--session", "home"], environment: ["FERRY_SESSION": ""]) as? PeersCommand)
        #expect(overridden.global.session == "home")
    }

    @Test func unsetVariablesLeaveTheBuiltInDefaults() throws {
        let command = try #require(try parseCommand(["peers"], environment: ["HOME": "/nonexistent"]) as? PeersCommand)
        #expect(command.global == GlobalOptions())
    }

    /// `trust add ID` pins under the name given with `--name` only: `FERRY_NAME` is this device's name, not the
    /// peer's.
    @Test func ferryNameIsNotThePinnedName() throws {
        let id = String(repeating: "ab", count: 32)
        let command = try #require(
            try parseCommand(["trust", "add", id], environment: ["FERRY_NAME": "me"]) as? TrustCommand.Add)
        #expect(command.name == nil)
        #expect(command.global.name == "me")
    }

    static let peersUsage = UsageErrorSnapshotTests.peersUsage

    @Test func invalidVariablesAreUsageErrorsNamingTheVariable() async {
        let tooLong = String(repeating: "x", count: 65)
        let cases: [([String: String], String)] = [
            (["FERRY_SESSION": ""], "FERRY_SESSION is empty; unset it or set a session ID of 1-64 bytes"),
            (
                ["FERRY_SESSION": tooLong],
                "FERRY_SESSION is 65 bytes long; unset it or set a session ID of 1-64 bytes"
            ),
            (["FERRY_NAME": ""], "FERRY_NAME is empty; unset it or set a display name of 1-64 bytes"),
            (
                ["FERRY_NAME": "a\u{1B}[2Jb"],
                "FERRY_NAME contains control characters; unset it or set a display name without them"
            ),
            (
                ["FERRY_INTERFACE": " , "],
                "FERRY_INTERFACE is empty; unset it or set interface names separated by commas (e.g. lo or eth0,wlan0)"
            ),
            (
                ["FERRY_INTERFACE": "lo,eth0:1"],
                "FERRY_INTERFACE: 'eth0:1' is not a valid interface name (1 to 15 bytes without '/', ':' or "
                    + "spaces); unset it or set names separated by commas, e.g. lo or eth0,wlan0"
            ),
        ]
        for (environment, message) in cases {
            #expect(
                await FerryRun.run(["peers"], environment: environment)
                    == .usageError("Error: \(message)\n" + Self.peersUsage))
        }
    }

    /// `ferry id` (in-process, through `FerryCommand.main`) shows the name `FERRY_NAME` gives, and `--name` wins.
    @Test func idShowsTheNameFromTheEnvironment() async throws {
        let home = try ConfigHome()
        let environment = home.environment.merging(["FERRY_NAME": "from-env"]) { $1 }
        let run = await FerryRun.run(["id", "--json"], environment: environment)
        #expect(run.code == .success)
        #expect(run.stdout.contains(#""name":"from-env""#))
        let flagged = await FerryRun.run(["id", "--json", "--name", "from-flag"], environment: environment)
        #expect(flagged.stdout.contains(#""name":"from-flag""#))
    }

    /// An interface that `FERRY_INTERFACE` names but the machine does not have (up, with IPv4): the error names the
    /// variable it came from, so that a person who forgot the variable knows what to unset; from `--interface`, the
    /// error names the flag instead.
    @Test func aMissingInterfaceNamesTheVariableItCameFrom() async throws {
        let home = try ConfigHome()
        let fromVariable = await FerryRun.run(
            ["peers", "--timeout", "1"], environment: home.environment.merging(["FERRY_INTERFACE": "nosuchif9"]) { $1 })
        #expect(fromVariable.code == .failure)
        #expect(fromVariable.stdout == "")
        #expect(
            fromVariable.stderr.hasPrefix("Error: FERRY_INTERFACE=nosuchif9: no usable interface named nosuchif9 "),
            "\(fromVariable.stderr)")
        #expect(fromVariable.stderr.contains("unset FERRY_INTERFACE"), "\(fromVariable.stderr)")
        let fromFlag = await FerryRun.run(
            ["peers", "--timeout", "1", "--interface", "lo", "--interface", "nosuchif9"],
            environment: home.environment.merging(["FERRY_INTERFACE": "lo"]) { $1 })
        #expect(fromFlag.code == .failure)
        #expect(
            fromFlag.stderr.hasPrefix("Error: --interface nosuchif9: no usable interface named nosuchif9 "),
            "\(fromFlag.stderr)")
        #expect(!fromFlag.stderr.contains("FERRY_INTERFACE"), "\(fromFlag.stderr)")
    }

    /// `ferry peers` that finds nobody names the session, and `FERRY_SESSION` when the session came from it.
    @Test func noPeersFoundNamesFerrySessionWhenItChoseTheSession() async throws {
        let home = try ConfigHome()
        let session = "t-env-\(UInt32.random(in: 0...UInt32.max))"
        let run = await FerryRun.run(
            ["peers", "--timeout", "0.5", "--interface", "lo", "--port", "0"],
            environment: home.environment.merging(["FERRY_SESSION": session]) { $1 })
        #expect(run.code == .success, "\(run.stderr)")
        #expect(run.stderr == "No peers found in session '\(session)' (from FERRY_SESSION) within 0.5 s.\n")
    }
}
