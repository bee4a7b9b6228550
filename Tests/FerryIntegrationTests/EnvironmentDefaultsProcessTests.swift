import FerryTestSupport
import Foundation
import Testing

/// Issue 13 "defaults once", with a real process: the built `ferry` reads `FERRY_NAME` from its environment.
extension IntegrationTests {
    @Suite struct EnvironmentDefaultsProcessTests {
        @Test func idShowsTheNameFromFerryName() async throws {
            let harness = try ChatHarness()
            let environment = harness.environment("envname").merging(["FERRY_NAME": "from-env"]) { $1 }
            let process = try harness.registry.startFerry(["id", "--json"], environment: environment)
            let (status, lines, errors) = try await process.finish(timeout: .seconds(60))
            let object = lines.compactMap(TransferHarness.json).first
            #expect(status == 0, "ferry id: \(errors)")
            #expect(object?["name"] as? String == "from-env", "ferry id --json: \(lines)")
        }
    }
}
