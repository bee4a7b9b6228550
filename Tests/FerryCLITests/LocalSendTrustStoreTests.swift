import FerrySession
import FerryWire
import Foundation
import Testing

@testable import FerryCLI

/// LocalSend devices in the trust store and in `ferry trust` (issue 29, "Trust"): what the Verify page's text is, how
/// a LocalSend entry is written and read back (old files unchanged), listed, and removed by alias or fingerprint.
@Suite struct LocalSendTrustStoreTests {
    let ferryPeer = testDeviceID([1])
    let phone = testDeviceID([0xAB, 0x01], rest: 0x5C)
    let noon = Date(timeIntervalSince1970: 1_796_040_000)

    /// The Verify page sorts the two upper-case fingerprints as strings and joins them: the same text whichever
    /// side computes it, upper case, the smaller first ('0'...'9' before 'A'...'F').
    @Test func theVerifyPageTextIsBothFingerprintsInUpperCaseHexSortedAndJoined() {
        let own = testDeviceID([0x0F], rest: 0xEE)
        let peer = testDeviceID([0xA0], rest: 0x11)
        let text = LocalSendVerification.verifyPageText(own: own, peer: peer)
        #expect(text == "0F" + String(repeating: "EE", count: 31) + "A0" + String(repeating: "11", count: 31))
        #expect(LocalSendVerification.verifyPageText(own: peer, peer: own) == text)
        #expect(
            LocalSendVerification.verifyPageLines(own: peer, peer: own) == [
                String(text.prefix(64)), String(text.suffix(64)),
            ])
        // '9' sorts before 'A' in the app (code units), as it does here.
        let nine = testDeviceID([0x9F])
        #expect(LocalSendVerification.verifyPageText(own: peer, peer: nine).hasPrefix("9F"))
    }

    /// The pin command named to a person is pasted into a shell: a plain alias goes as it is, one with shell
    /// characters in single quotes (a quote inside as '\'' ), so pasting it pins that name and runs nothing else.
    @Test func thePinCommandQuotesAnAliasForTheShell() {
        let hex = LocalSendVerification.fingerprint(phone)
        #expect(
            LocalSendVerification.pinCommand(phone, name: "pixel-7.a_b")
                == "ferry trust add --localsend \(hex) --name pixel-7.a_b")
        #expect(LocalSendVerification.pinCommand(phone, name: "") == "ferry trust add --localsend \(hex) --name NAME")
        #expect(
            LocalSendVerification.pinCommand(phone, name: "x; rm -rf ~ $(id) it's")
                == "ferry trust add --localsend \(hex) --name 'x; rm -rf ~ $(id) it'\\''s'")
        // Control characters cannot be typed back: the placeholder.
        #expect(
            LocalSendVerification.pinCommand(phone, name: "bob\u{1B}[2J")
                == "ferry trust add --localsend \(hex) --name NAME")
    }

    /// The prompt's lines name the device as LocalSend, show its claims escaped and its fingerprint in the app's form.
    @Test func thePromptsLinesShowKindFingerprintAndEscapedClaims() {
        let contact = LocalSendContact(
            alias: "bob\u{1B}[2J", fingerprint: phone, ownFingerprint: ferryPeer, deviceModel: "Pixel\u{7}",
            deviceType: "mobile", address: "10.0.0.5")
        let lines = contact.lines()
        #expect(
            lines[0]
                == "From LocalSend device 'bob\\u{1B}[2J' (Pixel\\u{7}, mobile, at 10.0.0.5); LocalSend has no"
                + " pairing code:")
        #expect(lines[1] == "  fingerprint \(phone.hex.uppercased())")
        let verify = LocalSendVerification.verifyPageLines(own: ferryPeer, peer: phone)
        #expect(lines.contains("    " + verify[0]) && lines.contains("    " + verify[1]))
        #expect(!lines.joined().contains("\u{1B}"))
        let bare = LocalSendContact(alias: "bob", fingerprint: phone, ownFingerprint: ferryPeer).lines()
        #expect(bare[0] == "From LocalSend device 'bob'; LocalSend has no pairing code:")
    }

    /// A ferry entry is written exactly as before (no `kind`), a line of an older file reads as a ferry peer, and a
    /// LocalSend entry keeps its kind and alias; an unknown kind is damage, not a ferry peer.
    @Test func theFileStaysBackwardCompatibleAndRecordsLocalSendDevices() async throws {
        let home = try ConfigHome()
        try home.store.pin(ferryPeer, name: "alice", now: noon)
        try home.store.pin(phone, name: "Nice Orange", kind: .localsend, alias: "Nice Orange", now: noon)
        let text = try String(contentsOfFile: home.store.file.path, encoding: .utf8)
        #expect(
            text == """
                {"added":"2026-11-30T12:00:00Z","deviceID":"\(ferryPeer.hex)","name":"alice"}
                {"added":"2026-11-30T12:00:00Z","alias":"Nice Orange","deviceID":"\(phone.hex)","kind":"localsend","name":"Nice Orange"}

                """)
        let loaded = try home.store.load()
        #expect(loaded.map(\.kind) == [.ferry, .localsend])
        #expect(loaded[1].localSendFingerprint == phone.hex.uppercased())
        let future = Data(
            "{\"added\":\"2026-11-30T12:00:00Z\",\"deviceID\":\"\(phone.hex)\",\"kind\":\"wormhole\",\"name\":\"x\"}\n"
                .utf8)
        #expect(throws: CLIError.self) { try TrustStore.decode(future, file: home.store.file) }
    }

    /// `trust list` shows the kind and, for a LocalSend device, its fingerprint in the app's form and its alias;
    /// `--json` carries `kind`, and `fingerprint` and `alias` for LocalSend devices.
    @Test func listShowsLocalSendDevicesWithKindFingerprintAndAlias() async throws {
        let home = try ConfigHome()
        try home.store.pin(ferryPeer, name: "alice", now: noon)
        try home.store.pin(phone, name: "phone", kind: .localsend, alias: "Nice Orange", now: noon)
        let fingerprint = phone.hex.uppercased()
        #expect(
            await home.run(["trust", "list"])
                == FerryRun(
                    code: .success,
                    stdout: """
                        NAME   KIND       ADDED       DEVICE ID
                        alice  ferry      2026-11-30  \(ferryPeer)
                        phone  LocalSend  2026-11-30  \(fingerprint)  alias 'Nice Orange'

                        """,
                    stderr: ""))
        let json = await home.run(["trust", "list", "--json"])
        #expect(
            json.stdout == """
                {"event":"trustedPeer","deviceID":"\(ferryPeer)","hex":"\(ferryPeer.hex)","name":"alice","added":"2026-11-30T12:00:00Z","kind":"ferry"}
                {"event":"trustedPeer","deviceID":"\(phone)","hex":"\(phone.hex)","name":"phone","added":"2026-11-30T12:00:00Z","kind":"localsend","fingerprint":"\(fingerprint)","alias":"Nice Orange"}

                """)
    }

    /// `trust remove` takes a LocalSend device by its alias (not when two share it) or a fingerprint prefix.
    @Test func removeTakesALocalSendDeviceByAliasOrFingerprintPrefix() async throws {
        let home = try ConfigHome()
        let other = testDeviceID([0xCD], rest: 0x77)
        try home.store.pin(phone, name: "", kind: .localsend, alias: "iPhone", now: noon)
        try home.store.pin(other, name: "", kind: .localsend, alias: "iPhone", now: noon)
        let ambiguous = await home.run(["trust", "remove", "iphone"])
        #expect(ambiguous.code == .failure && ambiguous.stderr.contains("2 trusted LocalSend devices"), "\(ambiguous)")
        #expect(try home.store.load().count == 2)
        let byPrefix = await home.run(["trust", "remove", String(other.hex.uppercased().prefix(10))])
        #expect(byPrefix.stdout == "No longer trusted: LocalSend \(other.hex.uppercased()).\n", "\(byPrefix)")
        let byAlias = await home.run(["trust", "remove", "iPhone"])
        #expect(byAlias.stdout == "No longer trusted: LocalSend \(phone.hex.uppercased()).\n", "\(byAlias)")
        #expect(try home.store.load().isEmpty)
    }

    /// `trust add --localsend` takes the 64 hex digits the app shows and pins a LocalSend device; ferry's grouped form
    /// is refused there; an ID pinned as a ferry peer becomes a LocalSend device, its name kept.
    @Test func addLocalSendPinsAFingerprintAsALocalSendDevice() async throws {
        let home = try ConfigHome()
        let fingerprint = phone.hex.uppercased()
        let added = await home.run(["trust", "add", "--localsend", fingerprint, "--name", "phone"])
        #expect(added == FerryRun(code: .success, stdout: "Trusted 'phone' (LocalSend \(fingerprint)).\n", stderr: ""))
        #expect(try home.store.entry(for: phone)?.kind == .localsend)
        let grouped = await home.run(["trust", "add", "--localsend", phone.description])
        #expect(grouped.code != .success && grouped.stderr.contains("not a LocalSend fingerprint"), "\(grouped)")
        try home.store.pin(ferryPeer, name: "box", now: noon)
        let converted = await home.run(["trust", "add", "--localsend", ferryPeer.hex])
        #expect(converted.stdout.contains("now as a LocalSend device"), "\(converted)")
        #expect(try home.store.entry(for: ferryPeer).map { ($0.kind, $0.name) } ?? (.ferry, "") == (.localsend, "box"))
    }

    /// A LocalSend device refused as a stranger (`--accept ask` with nobody to ask) is named by its fingerprint as its
    /// app shows it, and the hint is a `trust add --localsend` that pins it as a LocalSend device.
    @Test func aRefusedLocalSendDeviceIsNamedByItsFingerprintAndTheHintPinsIt() async throws {
        let peer = PeerInfo(
            peerID: PeerID(rawValue: PeerID.firstForeign), deviceID: phone, displayName: "bob", mode: .peer,
            address: nil, isDiscovered: false, isAcceptingConnections: false, state: .connected,
            protocolName: "localsend")
        let fingerprint = phone.hex.uppercased()
        let line = TransferReporter.refusalLine("a transfer from", peer, why: "nobody to ask", pinHint: true)
        #expect(
            line
                == "refused a transfer from LocalSend device bob (fingerprint \(fingerprint)): nobody to ask; to trust"
                + " it: ferry trust add --localsend \(fingerprint) --name bob")
        let home = try ConfigHome()
        let hint = line.components(separatedBy: "ferry ").last?.split(separator: " ").map(String.init) ?? []
        #expect(await home.run(hint).code == .success)
        #expect(try home.store.entry(for: phone)?.kind == .localsend)
    }

    /// `a` on a LocalSend offer pins the device as LocalSend with its alias as the name; an alias that is another
    /// pinned peer's name (aliases repeat) pins it without a name, says so, and leaves the other peer alone.
    @Test func alwaysPinsUnderTheAliasUnlessAnotherPeerHasThatName() async throws {
        let home = try ConfigHome()
        let err = CapturingTextSink()
        let context = CommandContext(stdout: CapturingTextSink(), stderr: err, environment: home.environment)
        let reporter = TransferReporter(context: context, json: false, bars: false)
        func localSend(_ id: DeviceID, _ alias: String) -> PeerInfo {
            PeerInfo(
                peerID: PeerID(rawValue: PeerID.firstForeign), deviceID: id, displayName: alias, mode: .peer,
                address: nil, isDiscovered: false, isAcceptingConnections: false, state: .connected,
                protocolName: "localsend")
        }
        try ReceiveCommand.pinLocalSend(localSend(phone, "iPhone"), in: home.store, reporter: reporter)
        let other = testDeviceID([0xCD], rest: 0x77)
        try ReceiveCommand.pinLocalSend(localSend(other, "iphone"), in: home.store, reporter: reporter)
        let pinned = try home.store.load()
        #expect(pinned.map(\.name) == ["iPhone", ""])
        #expect(pinned.map(\.alias) == ["iPhone", "iphone"])
        #expect(pinned.map(\.kind) == [.localsend, .localsend])
        #expect(err.text.contains("this LocalSend device is pinned without a name"), "\(err.text)")
    }

    /// A LocalSend device chooses its alias: one that is also the start of another pinned device's ID does not make
    /// `trust remove` take the device with that alias (ambiguous, nothing removed), and `a` does not pin a device
    /// under an ID-looking alias as its name.
    @Test func anAliasThatLooksLikeAnotherDevicesIDIsNeitherAmbiguousNorAName() async throws {
        let home = try ConfigHome()
        try home.store.pin(ferryPeer, name: "alice", now: noon)
        let forged = ferryPeer.shortDescription
        try home.store.pin(phone, name: "", kind: .localsend, alias: forged, now: noon)
        let ambiguous = await home.run(["trust", "remove", forged])
        #expect(ambiguous.code == .failure && ambiguous.stderr.contains("ambiguous"), "\(ambiguous)")
        #expect(try home.store.load().count == 2)
        let hexPrefix = String(ferryPeer.hex.uppercased().prefix(10))
        try home.store.pin(phone, name: "", kind: .localsend, alias: hexPrefix, now: noon)
        #expect(await home.run(["trust", "remove", hexPrefix]).code == .failure)
        #expect(try home.store.load().count == 2)

        let reporter = TransferReporter(
            context: CommandContext(
                stdout: CapturingTextSink(), stderr: CapturingTextSink(), environment: home.environment),
            json: false, bars: false)
        for (byte, alias) in [(UInt8(0x31), forged), (0x32, hexPrefix), (0x33, ferryPeer.description)] {
            let device = testDeviceID([byte], rest: byte)
            let peer = PeerInfo(
                peerID: PeerID(rawValue: PeerID.firstForeign), deviceID: device, displayName: alias, mode: .peer,
                address: nil, isDiscovered: false, isAcceptingConnections: false, state: .connected,
                protocolName: "localsend")
            try ReceiveCommand.pinLocalSend(peer, in: home.store, reporter: reporter)
            let entry = try home.store.entry(for: device)
            #expect(entry?.name == "" && entry?.alias == alias, "\(String(describing: entry))")
        }
    }

    /// A device that announces no alias is shown as "LocalSend device"; `a` pins it with its empty alias (and no
    /// name), not with that stand-in, which `trust list` would show as the device's own alias.
    @Test func anEmptyAliasIsPinnedEmptyNotAsTheStandInName() async throws {
        let home = try ConfigHome()
        let reporter = TransferReporter(
            context: CommandContext(
                stdout: CapturingTextSink(), stderr: CapturingTextSink(), environment: home.environment),
            json: false, bars: false)
        let peer = PeerInfo(
            peerID: PeerID(rawValue: PeerID.firstForeign), deviceID: phone, displayName: "LocalSend device",
            mode: .peer, address: nil, isDiscovered: false, isAcceptingConnections: false, state: .connected,
            protocolName: "localsend")
        #expect(try ReceiveCommand.pinLocalSend(peer, in: home.store, reporter: reporter) == "")
        let entry = try home.store.entry(for: phone)
        #expect(entry?.alias == "" && entry?.name == "", "\(String(describing: entry))")
    }
}
