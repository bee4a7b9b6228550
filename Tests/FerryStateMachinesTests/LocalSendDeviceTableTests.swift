import FerryWire
import Testing

@testable import FerryStateMachines

@Suite struct LocalSendDeviceTableTests {
    typealias Table = LocalSendDeviceTable<String>
    let t0 = ContinuousClock.now
    let own = DeviceID(bytes: Array(repeating: 0xEE, count: 32))!

    func hash(_ byte: UInt8) -> DeviceID { DeviceID(bytes: Array(repeating: byte, count: 32))! }
    func hex(_ byte: UInt8) -> String { Table.key(hash(byte)) }

    func device(
        _ byte: UInt8, alias: String = "Pixel", announce: Bool? = true, scheme: String? = "https",
        fingerprint: String? = nil
    ) -> LocalSendDevice {
        LocalSendDevice(
            alias: alias, version: "2.1", deviceModel: "Pixel 7", deviceType: "mobile",
            fingerprint: fingerprint ?? hex(byte), port: 53317, scheme: scheme, download: false, announce: announce)
    }

    func table(capacity: Int = 256, answerRate: RateLimit = RateLimit(burst: 8, per: .seconds(2))) -> Table {
        Table(configuration: .init(ownCertificateHash: own, capacity: capacity, answerRate: answerRate))
    }

    @Test func startAnnouncesNowThenAtOneAndThreeSecondsThenEveryMinute() {
        var table = table()
        #expect(table.started(now: t0) == [.announce])
        #expect(table.tick(now: t0 + .milliseconds(900)) == [])
        #expect(table.tick(now: t0 + .seconds(1)) == [.announce])
        #expect(table.tick(now: t0 + .seconds(2)) == [])
        #expect(table.tick(now: t0 + .seconds(3)) == [.announce])
        #expect(table.nextDeadline == t0 + .seconds(63))
        #expect(table.tick(now: t0 + .seconds(62)) == [])
        #expect(table.tick(now: t0 + .seconds(63)) == [.announce])
        #expect(table.tick(now: t0 + .seconds(123)) == [.announce])
    }

    @Test func anAnnouncementListsTheDeviceByFingerprintAndIsAnswered() throws {
        var table = table()
        let actions = table.announcementReceived(device(1), from: "10.0.0.2", now: t0)
        #expect(actions.count == 2)
        guard case .deviceFound(let record) = try #require(actions.first), case .answer(let answered) = actions[1]
        else {
            Issue.record("expected deviceFound then answer, got \(actions)")
            return
        }
        #expect(record == answered)
        #expect(record.key == hex(1) && record.certificateHash == hash(1))
        #expect(record.alias == "Pixel" && record.deviceModel == "Pixel 7" && record.deviceType == "mobile")
        #expect(record.version == "2.1" && record.address == "10.0.0.2" && record.port == 53317)
        #expect(record.isUsable && !record.verified && record.unusableReason == nil)
    }

    @Test func aLowerCaseFingerprintIsTheSameDevice() {
        var table = table()
        _ = table.announcementReceived(device(0xAB), from: "10.0.0.2", now: t0)
        let again = table.announcementReceived(
            device(0xAB, announce: false, fingerprint: hex(0xAB).lowercased()), from: "10.0.0.2", now: t0)
        #expect(again == [])
        #expect(table.records.count == 1)
    }

    @Test func anAnswerReplyIsNotAnsweredAndAChangeIsAnUpdate() throws {
        var table = table()
        #expect(table.announcementReceived(device(1, announce: false), from: "10.0.0.2", now: t0).count == 1)
        #expect(table.announcementReceived(device(1, announce: false), from: "10.0.0.2", now: t0) == [])
        let renamed = table.announcementReceived(
            device(1, alias: "Phone", announce: false), from: "10.0.0.2", now: t0 + .seconds(1))
        guard case .deviceUpdated(let record) = try #require(renamed.first) else {
            Issue.record("expected deviceUpdated, got \(renamed)")
            return
        }
        #expect(record.alias == "Phone" && renamed.count == 1)
    }

    @Test func ourOwnAnnouncementIsIgnored() {
        var table = table()
        #expect(table.announcementReceived(device(0xEE), from: "10.0.0.1", now: t0) == [])
        #expect(table.records.isEmpty)
    }

    @Test func anHTTPDeviceIsListedAsNotUsableAndNeverAnswered() throws {
        var table = table()
        let actions = table.announcementReceived(
            device(1, scheme: "http", fingerprint: "a-random-string"), from: "10.0.0.3", now: t0)
        #expect(actions.count == 1)
        guard case .deviceFound(let record) = try #require(actions.first) else { return }
        #expect(!record.isUsable && record.certificateHash == nil)
        #expect(record.unusableReason == "it has encryption off (protocol http); ferry speaks HTTPS only")
        let bare = table.announcementReceived(device(2, fingerprint: "not-hex"), from: "10.0.0.4", now: t0)
        guard case .deviceFound(let other) = try #require(bare.first) else { return }
        #expect(bare.count == 1 && other.unusableReason == "its fingerprint is not a certificate hash")
    }

    @Test func anAnnouncementWithoutFingerprintIsDropped() {
        var table = table()
        var bare = device(1)
        bare.fingerprint = nil
        #expect(table.announcementReceived(bare, from: "10.0.0.2", now: t0) == [])
        #expect(table.records.isEmpty)
    }

    @Test func aFloodOfForgedAnnouncementsIsBoundedAndDoesNotPushOutListedDevices() {
        var table = table(capacity: 16)
        _ = table.announcementReceived(device(1), from: "10.0.0.2", now: t0)
        var answers = 0
        for index in 0..<10_000 {
            var bytes = Array(repeating: UInt8(0), count: 32)
            bytes[0] = UInt8(index & 0xFF)
            bytes[1] = UInt8(index >> 8)
            bytes[2] = 0x77
            let forged = device(0, fingerprint: Table.key(DeviceID(bytes: bytes)!))
            answers +=
                table.announcementReceived(forged, from: "10.0.0.66", now: t0).filter {
                    if case .answer = $0 { return true } else { return false }
                }.count
        }
        #expect(table.records.count == 16)
        #expect(table.records[hex(1)] != nil)
        #expect(table.droppedForCapacity == 10_000 - 15)
        // One answer went to the real device; the burst's other 7 to forged ones, none more at the same instant.
        #expect(answers == 7)
        #expect(table.answersSkipped == 15 - 7)
    }

    @Test func answersToOneDeviceAreSpacedByTheGap() {
        var table = table()
        #expect(table.announcementReceived(device(1), from: "10.0.0.2", now: t0).count == 2)
        #expect(table.announcementReceived(device(1), from: "10.0.0.2", now: t0 + .seconds(1)).isEmpty)
        let later = table.announcementReceived(device(1), from: "10.0.0.2", now: t0 + .seconds(10))
        #expect(later.count == 1)
    }

    @Test func aSilentDeviceExpires() throws {
        var table = table()
        _ = table.started(now: t0)
        _ = table.announcementReceived(device(1, announce: false), from: "10.0.0.2", now: t0)
        #expect(table.tick(now: t0 + .seconds(210)).allSatisfy { $0 == .announce })
        let lost = table.tick(now: t0 + .seconds(211)).filter { $0 != .announce }
        guard case .deviceLost(let record) = try #require(lost.first) else { return }
        #expect(record.key == hex(1) && table.records.isEmpty)
    }

    @Test func aRegisterWithAMatchingClientCertificateIsRecordedAsVerified() throws {
        var table = table()
        let verdict = table.registerReceived(
            device(1, announce: nil), clientCertificate: hash(1), from: "10.0.0.2", now: t0)
        guard case .recorded(let actions) = verdict, case .deviceFound(let record) = try #require(actions.first)
        else {
            Issue.record("expected recorded, got \(verdict)")
            return
        }
        #expect(record.verified && record.isUsable && record.key == hex(1))
    }

    @Test func aRegisterWhoseFingerprintIsNotItsCertificatesHashIsRefused() {
        var table = table()
        let verdict = table.registerReceived(
            device(2, announce: nil), clientCertificate: hash(1), from: "10.0.0.2", now: t0)
        guard case .refused(let reason) = verdict else {
            Issue.record("expected refused, got \(verdict)")
            return
        }
        #expect(reason.contains("is not the hash of the client certificate"))
        #expect(table.records.isEmpty)
    }

    @Test func aRegisterWithoutCertificateIsAnUnverifiedClaim() throws {
        var table = table()
        let verdict = table.registerReceived(
            device(3, announce: nil), clientCertificate: nil, from: "10.0.0.2", now: t0)
        guard case .recorded(let actions) = verdict, case .deviceFound(let record) = try #require(actions.first)
        else {
            Issue.record("expected recorded, got \(verdict)")
            return
        }
        #expect(!record.verified && actions.count == 1)
        let junk = table.registerReceived(
            device(4, announce: nil, fingerprint: "xyz"), clientCertificate: nil, from: "10.0.0.2", now: t0)
        #expect(junk == .refused("the register has no fingerprint that is a certificate hash"))
    }

    @Test func aPinnedAnswerToOurRegisterMarksTheDeviceVerified() throws {
        var table = table()
        _ = table.announcementReceived(device(1), from: "10.0.0.2", now: t0)
        let record = try #require(table.records[hex(1)])
        var body = device(1, alias: "Pixel", announce: nil)
        body.fingerprint = "whatever the body says"
        let actions = table.registerAnswered(body, by: record, now: t0 + .seconds(1))
        guard case .deviceUpdated(let updated) = try #require(actions.first) else { return }
        #expect(updated.verified && updated.key == hex(1))
    }

    /// A datagram's source address is spoofable: an unverified announcement from a verified device's address keeps
    /// it listed (it was heard) but cannot replace what was checked (alias, model, type, port shown as the
    /// certificate's); from another address it is a claim again; a later verified register may change them.
    @Test func anUnverifiedDatagramCannotRewriteAVerifiedDevicesFields() throws {
        var table = table()
        _ = table.registerReceived(device(1, announce: nil), clientCertificate: hash(1), from: "10.0.0.2", now: t0)
        var forged = device(1, alias: "Bank", announce: false)
        forged.deviceModel = "Forged"
        forged.deviceType = "server"
        forged.port = 4444
        forged.version = "9.9"
        let actions = table.announcementReceived(forged, from: "10.0.0.2", now: t0 + .seconds(5))
        let kept = try #require(table.records[hex(1)])
        #expect(kept.verified && actions.isEmpty, "\(actions)")
        #expect(kept.alias == "Pixel" && kept.deviceModel == "Pixel 7" && kept.deviceType == "mobile")
        #expect(kept.port == 53317 && kept.version == "2.1")
        #expect(kept.lastSeen == t0 + .seconds(5))
        var renamed = device(1, alias: "Pixel of Bob", announce: nil)
        renamed.deviceModel = "Pixel 8"
        let verdict = table.registerReceived(
            renamed, clientCertificate: hash(1), from: "10.0.0.2", now: t0 + .seconds(6))
        guard case .recorded(let updates) = verdict, case .deviceUpdated(let updated) = try #require(updates.first)
        else {
            Issue.record("expected an update, got \(verdict)")
            return
        }
        #expect(updated.verified && updated.alias == "Pixel of Bob" && updated.deviceModel == "Pixel 8")
        _ = table.announcementReceived(forged, from: "10.0.0.9", now: t0 + .seconds(7))
        let claimed = try #require(table.records[hex(1)])
        #expect(!claimed.verified && claimed.alias == "Bank" && claimed.address == "10.0.0.9")
    }
}
