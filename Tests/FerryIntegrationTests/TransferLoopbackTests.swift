import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// `ferry send` and `ferry receive` as separate processes on loopback: what a user does, checked by content.
    @Suite(.serialized) struct TransferLoopbackTests {
        @Test func aSingleFileArrivesVerified() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("data.bin", size: 3 << 20 + 12_345)
            let (receiver, port) = try harness.receiver()
            let (status, summary, _) = try harness.send([file.path], to: [port])
            #expect(status == 0, "\(receiver.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["data.bin": 3 << 20 + 12_345])
            #expect(try TransferHarness.sha256(harness.inbox.path + "/data.bin") == TransferHarness.sha256(file.path))
            #expect(summary?["files"] as? Int == 1)
        }

        @Test func anImageKeepsItsBytesAndAnEmptyFileArrivesToo() throws {
            let harness = try TransferHarness()
            let image = try harness.files.jpeg("photo.jpg", width: 640, height: 480)
            let empty = try harness.files.write("empty.txt", bytes: [])
            let (receiver, port) = try harness.receiver()
            let started = try harness.sender([image.path, empty.path], to: [port])
            let offer = try receiver.nextJSON { $0["event"] as? String == "started" }
            #expect(try started.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let files = try TransferHarness.visibleFiles(in: harness.inbox.path)
            #expect(files["empty.txt"] == 0)
            #expect(try TransferHarness.sha256(harness.inbox.path + "/photo.jpg") == TransferHarness.sha256(image.path))
            let offered = offer["files"] as? [[String: Any]] ?? []
            let photo = offered.first { $0["name"] as? String == "photo.jpg" }
            #expect(photo?["pixelWidth"] as? Int == 640 && photo?["pixelHeight"] as? Int == 480, "\(offer)")
        }

        @Test func manySmallFilesAndADirectoryTreeKeepTheirLayout() throws {
            let harness = try TransferHarness()
            var layout: [String: Int] = [:]
            for index in 0..<200 { layout["album/\(index % 7)/file-\(index).txt"] = 100 + index * 37 }
            _ = try harness.files.tree(root: "album", files: layout.mapKeys { String($0.dropFirst("album/".count)) })
            let (receiver, port) = try harness.receiver()
            let (status, _, _) = try harness.send([harness.source.path + "/album"], to: [port])
            #expect(status == 0, "\(receiver.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == layout, "\(receiver.capturedOutput())")
        }

        @Test func aTakenNameGetsANumberedVariant() throws {
            let harness = try TransferHarness()
            let file = try harness.files.text("notes.txt", size: 5000)
            try Data("mine".utf8).write(to: URL(fileURLWithPath: harness.inbox.path + "/notes.txt"))
            let (receiver, port) = try harness.receiver()
            #expect(try harness.send([file.path], to: [port]).status == 0)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let files = try TransferHarness.visibleFiles(in: harness.inbox.path)
            #expect(files == ["notes.txt": 4, "notes (1).txt": 5000])
        }

        @Test func aDeniedOfferWritesNothingAndTheSenderSaysSo() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("x.bin", size: 1000)
            // `ask` without a terminal denies.
            let (receiver, port) = try harness.receiver(accept: "ask", once: false)
            let sender = try harness.sender([file.path], to: [port], ["--compress", "none"])
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 1)
            let text = sender.allStderrLines.joined(separator: "\n") + sender.allStdoutLines.joined(separator: "\n")
            #expect(text.contains("denied"), "\(sender.capturedOutput())")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
            _ = try receiver.terminate()
        }

        @Test func aMissingFileIsOneClearLine() throws {
            let harness = try TransferHarness()
            let sender = try harness.sender([harness.source.path + "/nope.jpg"], to: [9])
            #expect(try sender.waitForExit(timeout: .seconds(30)) == 1)
            let errors = sender.allStderrLines.joined(separator: "\n")
            #expect(errors.contains("nope.jpg") && errors.contains("no such file"), "\(errors)")
        }

        /// TLS authenticates every record: a bit flipped on the wire fails the link at once (it is never taken as
        /// data, and there is nothing for the chunk digest to catch); nothing partial is published and sending again
        /// resumes from the verified data.
        @Test func flippedBitsOnTheWireFailTheLinkAndSendingAgainResumes() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("flip.bin", size: 6 << 20)
            let (receiver, port) = try harness.receiver(once: false)
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .flipBits(atOffsets: [3 << 20 + 500_000]))
            defer { proxy.close() }
            let recorder = try InotifyRecorder(directory: harness.inbox.path)
            defer { _ = recorder.stop() }
            let (status, _, _) = try harness.send([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            #expect(status == 1, "\(receiver.capturedOutput())")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
            let again = try harness.send([file.path], to: [port], ["--compress", "none"])
            #expect(again.status == 0, "\(receiver.capturedOutput())")
            // The second send took up the data the first one stored before the link failed.
            let resumed = again.finished?["resumedBytes"] as? Int ?? 0
            #expect(resumed > 0, "\(again.summary ?? [:])")
            #expect(try TransferHarness.sha256(harness.inbox.path + "/flip.bin") == TransferHarness.sha256(file.path))
            _ = try receiver.terminate()
            Self.expectOnlyCompleteArrivals(recorder.stop(), ["flip.bin": 6 << 20])
        }

        /// Of the names a watcher of the directory saw while a test ran (hidden ones aside: the staging folder, the
        /// recorder's stop file, a test's filler), only each of `complete` appeared, once, renamed into place at its
        /// full size: nothing partial was ever visible, not even for a moment.
        static func expectOnlyCompleteArrivals(
            _ events: [InotifyRecorder.Event], _ complete: [String: Int],
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            let visible = events.filter { !$0.name.hasPrefix(".") }
            let arrivals = visible.filter { event in
                event.mask & UInt32(IN_MOVED_TO) != 0 && complete[event.name].map { $0 == event.sizeWhenSeen } == true
            }
            #expect(visible.count == arrivals.count, "seen: \(visible)", sourceLocation: sourceLocation)
            #expect(
                Dictionary(grouping: arrivals, by: \.name).mapValues(\.count) == complete.mapValues { _ in 1 },
                "seen: \(visible)", sourceLocation: sourceLocation)
        }

        @Test func aDroppedLinkResumesFromTheVerifiedData() throws {
            let harness = try TransferHarness()
            let size = 24 << 20
            let file = try harness.files.random("big.bin", size: size)
            let (receiver, port) = try harness.receiver(once: false)
            let proxy = try FaultProxy(
                targetPort: UInt16(port), mode: .truncate(afterBytes: 10 << 20, direction: .clientToServer))
            defer { proxy.close() }
            let recorder = try InotifyRecorder(directory: harness.inbox.path)
            defer { _ = recorder.stop() }
            let first = try harness.send([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            #expect(first.status == 1)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing partial is published")
            let second = try harness.sendReportingFiles([file.path], to: [port], ["--compress", "none"])
            #expect(second.status == 0, "\(receiver.capturedOutput())")
            let resumed = second.finished?["resumedBytes"] as? Int ?? 0
            #expect(resumed >= 1 << 20, "\(second.finished ?? [:])")
            // The file's own event says the same (EVENTS.md `file`: the bytes not sent again); it said 0.
            #expect(second.files.map { $0["resumedBytes"] as? Int } == [resumed], "\(second.files)")
            #expect(try TransferHarness.sha256(harness.inbox.path + "/big.bin") == TransferHarness.sha256(file.path))
            _ = try receiver.terminate()
            Self.expectOnlyCompleteArrivals(recorder.stop(), ["big.bin": size])
        }

        @Test func aReceiverKilledMidFileResumesWhenSentAgain() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("kill.bin", size: 32 << 20)
            let (receiver, port) = try harness.receiver(once: false)
            // The proxy slows the stream down, so the receiver is still mid-file when the test reads its progress.
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            _ = try receiver.nextJSON(timeout: .seconds(120)) { object in
                object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
            }
            proxy.mode = .stall  // nothing more gets through, so the kill lands mid-file whatever the machine's speed
            receiver.kill()
            _ = try receiver.waitForExit()
            proxy.mode = .blackHole
            _ = try sender.terminate()
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
            let (again, newPort) = try harness.receiver()
            let second = try harness.send([file.path], to: [newPort], ["--compress", "none"])
            #expect(second.status == 0, "\(again.capturedOutput())")
            let resumed = second.finished?["resumedBytes"] as? Int ?? 0
            #expect(resumed >= 1 << 20, "\(second.summary ?? [:])")
            #expect(try TransferHarness.sha256(harness.inbox.path + "/kill.bin") == TransferHarness.sha256(file.path))
        }

        @Test func aFullDiskPublishesNothingAndSaysSo() throws {
            guard try TmpfsMount.requireAvailability() else {
                try Test.cancel("tmpfs unavailable: \(TmpfsMount.availabilityReason)")
            }
            let harness = try TransferHarness()
            let disk = try TmpfsMount(size: 8 << 20)
            defer { disk.unmount() }
            let huge = try harness.files.random("huge.bin", size: 16 << 20)
            let file = try harness.files.random("six.bin", size: 6 << 20, seed: 2)
            let recorder = try InotifyRecorder(directory: disk.path)
            defer { _ = recorder.stop() }
            let (receiver, port) = try harness.receiver(into: disk.path, once: false)
            // What cannot fit at all is refused at the offer...
            let denied = try harness.send([huge.path], to: [port], ["--compress", "none"])
            #expect(denied.status == 1)
            #expect("\(denied.summary ?? [:])".contains("space"), "\(denied.summary ?? [:])")
            // ...and a disk that fills up during a transfer ends it, with nothing partial published.
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            _ = try receiver.nextJSON { $0["event"] as? String == "started" }
            proxy.mode = .stall
            try? Data(count: 5 << 20).write(to: URL(fileURLWithPath: disk.path + "/.filler"))
            proxy.mode = .pass
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 1)
            let text = sender.allStdoutLines.joined(separator: "\n") + sender.allStderrLines.joined(separator: "\n")
            #expect(text.contains("full"), "\(sender.capturedOutput())")
            let visible = try TransferHarness.visibleFiles(in: disk.path).filter { $0.key != ".filler" }
            #expect(visible.isEmpty, "\(visible)")
            _ = try receiver.terminate()
            Self.expectOnlyCompleteArrivals(recorder.stop(), [:])
        }
    }
}

extension Dictionary {
    fileprivate func mapKeys<T: Hashable>(_ transform: (Key) -> T) -> [T: Value] {
        Dictionary<T, Value>(uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}
