import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Testing

@testable import FerryTransfer

/// Containment (promise 1) for the offer's folders section (PROTOCOL.md 11.3): a folder name meets the rules of a
/// file name, and a folder is never created through a link planted in the receive directory.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ContainmentFoldersTests {
    @Test func hostileFolderNamesDenyTheOfferAndAPlantedSymlinkIsNeverFollowed() async throws {
        try await ContainmentTests.withSiblings { inbox, outside in
            #expect(symlink(outside, inbox + "/link") == 0)
            try await TransferHostilePeerTests.withMallory(inbox: inbox, policy: .all) { mallory, bob, _ in
                let deep = Array(repeating: "abcdefg", count: 500).joined(separator: "/") + "/../../outside/x"
                let names = [
                    outside + "/x", "../outside/x", "a/../../outside/x", "x\u{0}y", ".ferry-staging/x",
                    ".FERRY-STAGING",
                    String(repeating: "n", count: 256), deep, "file.txt", "twice",
                ]
                for name in names {
                    let sender = HostileSender(session: mallory, receiver: bob)
                    var offer = sender.offer([("file.txt", 1)])
                    offer.folders = name == "twice" ? ["twice", "twice"] : [name]
                    try await sender.send(.offer(offer))
                    let reply = try #require(await sender.reply())
                    #expect(!reply.accepted && reply.reason == .invalidOffer, "\(name.prefix(40))")
                }
                // Valid names through the planted link: accepted, but nothing is created where it points.
                let sender = HostileSender(session: mallory, receiver: bob)
                var offer = sender.offer([("file.txt", 1)])
                offer.folders = ["link/x", "link"]
                try await sender.send(.offer(offer))
                #expect(try #require(await sender.reply()).accepted)
            }
            let visible = try FileManager.default.contentsOfDirectory(atPath: inbox).sorted()
            #expect(visible == [".ferry-staging", "link"])
        }
    }
}
