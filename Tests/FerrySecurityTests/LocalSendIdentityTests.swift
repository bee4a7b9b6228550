@testable import FerrySecurity
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

/// The certificate LocalSend peers see (docs/LOCALSEND.md, "Certificates and TLS"), checked with the `openssl`
/// command rather than with the code that made it.
@Suite("LocalSend identity", .timeLimit(.minutes(2)))
struct LocalSendIdentityTests {
    @Test func theCertificateIsRSA2048SelfSignedFrom2000WithoutExpiryAndItsFingerprintIsTheUpperCaseDERHash()
        async throws
    {
        try await TemporaryDirectory.with(prefix: "ferry-localsend") { directory in
            let identity = try LocalSendIdentity.generate()
            let pem = directory.path + "/certificate.pem"
            let text = String(decoding: try identity.pem(), as: UTF8.self)
            let certificate =
                "-----BEGIN CERTIFICATE-----" + text.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1]
            try certificate.write(toFile: pem, atomically: true, encoding: .utf8)

            let shown = try FerryProcess.run("openssl", ["x509", "-in", pem, "-noout", "-text"]).requireSuccess().stdout
            #expect(shown.contains("Version: 3"))
            #expect(shown.contains("Public-Key: (2048 bit)"))
            #expect(shown.contains("Signature Algorithm: sha256WithRSAEncryption"))
            #expect(shown.contains("Issuer: CN = ferry"))
            #expect(shown.contains("Subject: CN = ferry"))
            #expect(shown.contains("Not Before: Jan  1 00:00:00 2000 GMT"))
            #expect(shown.contains("Not After : Dec 31 23:59:59 9999 GMT"))
            // The self-signature verifies (the check LocalSend 1.18 makes with x509-parser).
            let verified = try FerryProcess.run("openssl", ["verify", "-CAfile", pem, pem])
            #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")

            let hashed = try FerryProcess.run(
                "sh", ["-c", "openssl x509 -in '\(pem)' -outform DER | sha256sum"]
            ).requireSuccess().stdout
            let expected = String(hashed.prefix(64)).uppercased()
            #expect(identity.fingerprint.description == expected)
            #expect(identity.fingerprint.deviceID.bytes == SHA256Hasher.digest(identity.certificateDER))
        }
    }

    @Test func fingerprintsParseInEitherCaseAndNothingElse() throws {
        let identity = try LocalSendIdentity.generate()
        let upper = identity.fingerprint.description
        #expect(upper == upper.uppercased() && upper.count == 64)
        #expect(LocalSendFingerprint(hex: upper) == identity.fingerprint)
        #expect(LocalSendFingerprint(hex: upper.lowercased()) == identity.fingerprint)  // localsend-cli's form
        #expect(LocalSendFingerprint(hex: String(upper.dropLast())) == nil)
        #expect(LocalSendFingerprint(hex: upper + "0") == nil)
        #expect(LocalSendFingerprint(hex: "G" + upper.dropFirst()) == nil)
        #expect(LocalSendFingerprint(hex: "b0b5e8c1-3a8f-4a5e-9d7e-2f3c1a9b8d7e") == nil)  // an app with HTTPS off
    }

    @Test func loadOrCreateKeepsAPrivateFileBesideTheIdentityAndReadsItAgain() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-localsend") { directory in
            let config = directory.path + "/config/ferry"
            let ferry = try DeviceIdentity.loadOrCreate(directory: config)
            let first = try LocalSendIdentity.loadOrCreate(directory: config)
            let second = try LocalSendIdentity.loadOrCreate(directory: config)
            #expect(first.fingerprint == second.fingerprint)
            #expect(try DeviceIdentity.loadOrCreate(directory: config).deviceID == ferry.deviceID)
            var status = stat()
            #expect(stat(config + "/" + LocalSendIdentity.fileName, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o600)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: config).sorted()
                    == ["identity.pem", "localsend-identity.pem"])
        }
    }

    @Test func aLinkAFileOthersCanReadAnEd25519KeyOrADamagedFileIsRefusedWithWhatToDo() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-localsend") { directory in
            let path = directory.path + "/" + LocalSendIdentity.fileName
            let elsewhere = directory.path + "/elsewhere.pem"
            try Data(try LocalSendIdentity.generate().pem()).write(to: URL(fileURLWithPath: elsewhere))
            chmod(elsewhere, 0o600)
            #expect(symlink(elsewhere, path) == 0)
            #expect {
                try LocalSendIdentity.loadOrCreate(directory: directory.path)
            } throws: { error in
                "\(error)".contains("could not read") && "\(error)".contains(path)
            }
            unlink(path)

            _ = try LocalSendIdentity.loadOrCreate(directory: directory.path)
            chmod(path, 0o644)
            #expect {
                try LocalSendIdentity.loadOrCreate(directory: directory.path)
            } throws: { error in
                "\(error)".contains("chmod 600")
            }

            unlink(path)
            try Data(try DeviceIdentity.generate().pem()).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
            #expect {
                try LocalSendIdentity.loadOrCreate(directory: directory.path)
            } throws: { error in
                "\(error)".contains("is damaged") && "\(error)".contains("not an RSA key")
            }
        }
    }
}
