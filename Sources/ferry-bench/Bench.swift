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
    static let usage = """
        usage: ferry-bench session [--messages N] [--round-trips N]
               ferry-bench transfer [--scale F] [--rows a,b,c,d,e,f] [--repeat N]   (--help for the rows)
               ferry-bench compare [--scale small|full|F] [--rows 1,2,3,4,5,6] [--rounds N]   (--help for the rows)
               ferry-bench stress [--sends N] [--mbit M] [--parallel P] [--hang-after S]
               ferry-bench swarm [--receivers N[,N...]] [--rate MBIT] [--mib SIZE] [--no-relay]   (--help)
               ferry-bench inflate zlib|zstd RAW-LENGTH FILE   (one chunk, alone in its process)
        """

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "session":
            await session(Array(arguments.dropFirst()))
        case "transfer":
            transfer(Array(arguments.dropFirst()))
        case "compare":
            compare(Array(arguments.dropFirst()))
        case "stress":
            stress(Array(arguments.dropFirst()))
        case "swarm":
            swarm(Array(arguments.dropFirst()))
        case "inflate":
            exit(InflateProbe.run(Array(arguments.dropFirst())))
        default:
            print(usage)
            exit(64)
        }
    }

    static func session(_ arguments: [String]) async {
        var messages = 100_000
        var roundTrips = 2_000
        var index = 0
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

    static func stress(_ arguments: [String]) {
        let benchmark: StressBenchmark
        do {
            benchmark = try StressBenchmark(arguments: arguments)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            print(StressBenchmark.usage)
            exit(64)
        }
        exit(benchmark.run() ? 0 : 1)
    }

    static func transfer(_ arguments: [String]) {
        let options: TransferOptions
        do {
            options = try TransferOptions(arguments: arguments)
        } catch {
            if let message = error.message {
                FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            }
            print(TransferOptions.usage)
            exit(error.message == nil ? 0 : 64)
        }
        exit(TransferBenchmark(options: options).run() ? 0 : 1)
    }

    static func swarm(_ arguments: [String]) {
        let options: SwarmOptions
        do {
            options = try SwarmOptions(arguments: arguments)
        } catch {
            if let message = error.message {
                FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            }
            print(SwarmOptions.usage)
            exit(error.message == nil ? 0 : 64)
        }
        exit(SwarmBenchmark(options: options).run() ? 0 : 1)
    }

    static func compare(_ arguments: [String]) {
        let options: CompareOptions
        do {
            options = try CompareOptions(arguments: arguments)
        } catch {
            if let message = error.message {
                FileHandle.standardError.write(Data("error: \(message)\n".utf8))
            }
            print(CompareOptions.usage)
            exit(error.message == nil ? 0 : 64)
        }
        exit(CompareBenchmark(options: options).run() ? 0 : 1)
    }
}
