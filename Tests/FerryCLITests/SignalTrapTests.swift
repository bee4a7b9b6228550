import Dispatch
import Glibc
import Testing

@testable import FerryCLI

/// `SignalTrap`: a stop signal that arrives as soon as `install` has returned reaches `onInterrupt`.
@Suite(.serialized) struct SignalTrapTests {
    /// SIGTERM sent to this process (by PID, as `kill` and systemd send it; a thread that does not block it runs the
    /// handler) right after `install` returns: `onInterrupt` runs, and the trap says which signal
    /// stopped the command (143). What it cannot show is the window this trap closed (a signal between libdispatch's
    /// `SIG_IGN` and its source's registration, or before the trap existed): that needs a thread preempted at the
    /// wrong moment, which `InterruptTests.anIdleReceiveInterruptedExits130` met once under load.
    @Test func aSignalRightAfterInstallIsNotLost() {
        let interrupted = DispatchSemaphore(value: 0)
        let trap = SignalTrap.install { interrupted.signal() }
        defer {
            trap.uninstall()
            // Setting SIG_IGN discards a SIGTERM still pending (none should be), which SIG_DFL would then act on.
            signal(SIGTERM, SIG_IGN)
            signal(SIGTERM, SIG_DFL)
        }
        kill(getpid(), SIGTERM)
        // A deadline for the failure only.
        #expect(interrupted.wait(timeout: .now() + 30) == .success, "onInterrupt never ran")
        #expect(trap.interruption == .terminated)
        #expect(trap.wasInterrupted)
    }
}
