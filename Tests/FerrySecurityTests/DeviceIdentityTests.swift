@testable import FerrySecurity
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

@Suite("Device identity")
struct DeviceIdentityTests {
    @Test func generatedIdentitiesDifferAndTheirIDIsTheCertificateHash() throws {
        let one = try DeviceIdentity.generate()
        let two = try DeviceIdentity.generate()
        #expect(one.deviceID != two.deviceID)
        #expect(one.deviceID.bytes == SHA256Hasher.digest(one.certificateDER))
        #expect(one.certificateDER.count < 1024)
    }

    @Test func pemRoundTripKeepsTheDeviceID() throws {
        let identity = try DeviceIdentity.generate()
        let pem = try identity.pem()
        let text = String(decoding: pem, as: UTF8.self)
        #expect(text.contains("-----BEGIN PRIVATE KEY-----"))
        #expect(text.contains("-----BEGIN CERTIFICATE-----"))
        let reloaded = try DeviceIdentity(pem: pem)
        #expect(reloaded.deviceID == identity.deviceID)
    }

    @Test func aKeyFromAnotherIdentityIsRefused() throws {
        let one = String(decoding: try DeviceIdentity.generate().pem(), as: UTF8.self)
        let two = String(decoding: try DeviceIdentity.generate().pem(), as: UTF8.self)
        let keyOfOne = one.components(separatedBy: "-----BEGIN CERTIFICATE-----")[0]
        let certificateOfTwo = "-----BEGIN CERTIFICATE-----" + two.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1]
        #expect(throws: SecurityError.identity("its certificate does not belong to its private key")) {
            try DeviceIdentity(pem: Array((keyOfOne + certificateOfTwo).utf8))
        }
        #expect(throws: SecurityError.identity("no private key and certificate in it")) {
            try DeviceIdentity(pem: Array("garbage".utf8))
        }
    }

    @Test func loadOrCreateMakesAPrivateFileOnceAndReadsItAgain() throws {
        let directory = try TemporaryDirectory(prefix: "ferry-identity")
        defer { directory.remove() }
        let config = directory.path + "/config/ferry"
        let first = try DeviceIdentity.loadOrCreate(directory: config)
        let second = try DeviceIdentity.loadOrCreate(directory: config)
        #expect(first.deviceID == second.deviceID)
        var status = stat()
        #expect(stat(config + "/identity.pem", &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(stat(config, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: config) == ["identity.pem"])
    }

    @Test func aFileOthersCanReadOrADamagedFileIsRefusedWithWhatToDo() throws {
        let directory = try TemporaryDirectory(prefix: "ferry-identity")
        defer { directory.remove() }
        _ = try DeviceIdentity.loadOrCreate(directory: directory.path)
        let path = directory.path + "/identity.pem"
        chmod(path, 0o644)
        do {
            _ = try DeviceIdentity.loadOrCreate(directory: directory.path)
            Issue.record("a world-readable key was accepted")
        } catch {
            #expect("\(error)".contains("chmod 600"))
        }
        chmod(path, 0o600)
        try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        do {
            _ = try DeviceIdentity.loadOrCreate(directory: directory.path)
            Issue.record("a damaged identity was accepted")
        } catch {
            #expect("\(error)".contains("is damaged"))
            #expect("\(error)".contains("remove it"))
        }
    }

    @Test func concurrentFirstRunsAgreeOnOneIdentity() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-identity")
        defer { directory.remove() }
        let path = directory.path
        let ids = try await withThrowingTaskGroup(of: DeviceID.self) { group in
            for _ in 0..<8 {
                group.addTask { try DeviceIdentity.loadOrCreate(directory: path).deviceID }
            }
            return try await group.reduce(into: Set<DeviceID>()) { $0.insert($1) }
        }
        #expect(ids.count == 1)
    }
}

@Suite("Device identity: encrypted keys")
struct EncryptedIdentityTests {
    @Test func anEncryptedKeyIsRefusedWithoutAskingForAPassphrase() throws {
        let plain = String(decoding: try DeviceIdentity.generate().pem(), as: UTF8.self)
        let certificate = "-----BEGIN CERTIFICATE-----" + plain.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1]
        // An encrypted PKCS#8 key as `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it (body irrelevant: it is
        // refused before decryption would be tried).
        let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhAAAAAAAAAAAICCAAw\n"
            + "-----END ENCRYPTED PRIVATE KEY-----\n"
        #expect(throws: SecurityError.identity("its private key is encrypted; ferry keeps its key unencrypted, mode 0600")) {
            try DeviceIdentity(pem: Array((encrypted + certificate).utf8))
        }
    }
}

@Suite("Device identity: key types")
struct IdentityKeyTypeTests {
    /// A P-256 key and certificate, as `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256` writes them:
    /// valid, matching, and of a kind ferry's links do not accept (PROTOCOL 3.1 allows Ed25519 only).
    static let p256 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgHA8/AvZ9pJq5HuGm
        qanqlRtFlxqGIgsKdwC6DIa4dbqhRANCAATCz+EihYugbtoinp1NQmcqeyHSBWkx
        ox0KaEx5aHVLGAOkXizTgNS0P0uqN2j9c/B/FGjEvQh23GIrjQP+zkYH
        -----END PRIVATE KEY-----
        -----BEGIN CERTIFICATE-----
        MIIBdzCCAR2gAwIBAgIUDwQz6Pk7ujwmultzK3msL5EU3DQwCgYIKoZIzj0EAwIw
        EDEOMAwGA1UEAwwFZmVycnkwIBcNMjYxMjAxMTQ0MzE2WhgPMjEyNjExMDcxNDQz
        MTZaMBAxDjAMBgNVBAMMBWZlcnJ5MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
        ws/hIoWLoG7aIp6dTUJnKnsh0gVpMaMdCmhMeWh1SxgDpF4s04DUtD9Lqjdo/XPw
        fxRoxL0IdtxiK40D/s5GB6NTMFEwHQYDVR0OBBYEFDcYIyi7TLSZcpg76d3I/PMk
        aDR4MB8GA1UdIwQYMBaAFDcYIyi7TLSZcpg76d3I/PMkaDR4MA8GA1UdEwEB/wQF
        MAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhANV7IHGH0N7/izF5sf/Jxvg+Few6UmJp
        4sE85OlGZ7f4AiBmAWQa8jQJwjRsPn1ulCjMNeIBLQSiH4RADRQy7jb/3Q==
        -----END CERTIFICATE-----
        """

    @Test func aKeyOtherThanEd25519IsRefusedWhenTheFileIsRead() {
        #expect(throws: SecurityError.identity("its key is not an Ed25519 key, the only kind ferry's links accept")) {
            try DeviceIdentity(pem: Array(Self.p256.utf8))
        }
    }
}
