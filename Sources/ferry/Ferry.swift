import FerryCLI
import FerrySystem
import Foundation

/// The `ferry` executable: runs the command line and exits with its code; everything else is in FerryCLI.
@main
struct Ferry {
    static func main() async {
        ProcessMemory.keepFreedBuffers()
        ProcessLimits.raiseOpenFileLimit()
        let code = await FerryCommand.main(arguments: CommandLine.arguments, context: .live())
        // Output is written by a queue of its own: the summary and the last results go out before the exit.
        FileHandleTextSink.standardOutput.flush()
        FileHandleTextSink.standardError.flush()
        exit(code.rawValue)
    }
}
