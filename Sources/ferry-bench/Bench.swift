import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation

/// `ferry-bench`: measurements that are not tests. Each figure is printed beside a baseline measured in the
/// same run, since the machine is shared and a lone absolute time means little.
@main
struct FerryBench {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let which = arguments.first, ["session"].contains(which) else {
            print("usage: ferry-bench session [--messages N] [--round-trips N]")
            exit(64)
        }
        var messages = 100_000
        var roundTrips = 2_000
        var index = 1
        while index + 1 < arguments.count {
            switch arguments[index] {
            case "--messages": messages = Int(arguments[index + 1]) ?? messages
            case "--round-trips": roundTrips = Int(arguments[index + 1]) ?? roundTrips
            default: break
            }
            index += 2
        }
        do {
            try await SessionBenchmark(messages: messages, roundTrips: roundTrips).run()
        } catch {
            print("benchmark failed: \(error)")
            exit(1)
        }
    }
}
