import FerryCLI
import Foundation

/// The `ferry` executable: runs the command line and exits with its code; everything else is in FerryCLI.
@main
struct Ferry {
    static func main() async {
        let code = await FerryCommand.main(arguments: CommandLine.arguments, context: .live())
        exit(code.rawValue)
    }
}
