import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// Transfers between network namespaces: separate hosts on a bridge, found by discovery, reached by name.
    @Suite(.serialized) struct TransferNamespaceTests {
        @Test func aFileAndADirectoryReachTwoHostsNamedByTheirDisplayNames() async throws {
            try await ChatHarness.onTestBed(hosts: 3) { bed, harness in
                let source = try TemporaryDirectory(prefix: "ferry-ns-source")
                defer { source.remove() }
                let files = TestFiles(in: source)
                let photo = try files.jpeg("photo.jpg", width: 1920, height: 1080)
                let data = try files.random("data.bin", size: 3 << 20 + 7)
                _ = try files.tree(root: "album", files: ["a.txt": 10, "b/c.txt": 70_000])
                var inboxes: [TemporaryDirectory] = []
                var receivers: [FerryProcess] = []
                for (index, name) in ["north", "south"].enumerated() {
                    let inbox = try TemporaryDirectory(prefix: "ferry-ns-\(name)")
                    inboxes.append(inbox)
                    let process = harness.registry.register(
                        try bed.startFerry(
                            on: bed.hosts[index + 1],
                            ["receive", "--json", "--into", inbox.path, "--accept", "all", "--once", "--session",
                             harness.session, "--name", name, "--port", "0"],
                            environment: harness.environment(name)))
                    _ = try process.nextJSON { $0["event"] as? String == "listening" }
                    receivers.append(process)
                }
                defer { inboxes.forEach { $0.remove() } }
                let sender = harness.registry.register(
                    try bed.startFerry(
                        on: bed.hosts[0],
                        ["send", "--json", photo.path, data.path, source.path + "/album", "--to", "north", "--to", "south",
                         "--wait", "30", "--session", harness.session, "--name", "west"],
                        environment: harness.environment("west")))
                #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
                let expected = try TransferHarness.sha256(data.path)
                for (index, receiver) in receivers.enumerated() {
                    #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
                    let inbox = inboxes[index].path
                    #expect(
                        try TransferHarness.visibleFiles(in: inbox).keys.sorted()
                            == ["album/a.txt", "album/b/c.txt", "data.bin", "photo.jpg"])
                    #expect(try TransferHarness.sha256(inbox + "/data.bin") == expected)
                    let started = receiver.allStdoutLines.compactMap(TransferHarness.json)
                        .first { $0["event"] as? String == "started" }
                    let address = (started?["peer"] as? String) ?? ""
                    #expect(address == "west", "\(started ?? [:])")
                }
            }
        }
    }
}
