import Dispatch
import Foundation
import Glibc
import Testing

@testable import FerryCLI

/// `SignalTrap`: a stop signal that arrives as soon as `install` has returned reaches `onInterrupt`.
@Suite(.serialized) struct SignalTrapTests {
    /// SIGTERM raised right after `install` returns, on a thread of this test's own that does not block it (a signal
    /// sent to the whole test process could land on, and interrupt, any other test's thread): `onInterrupt` runs,
    /// and the trap says which signal stopped the command (143). What it cannot show is the window this trap closed
    /// (a signal between libdispatch's `SIG_IGN` and its source's registration, or before the trap existed): that
    /// needs a thread preempted at the wrong moment, which `InterruptTests.anIdleReceiveInterruptedExits130` met
    /// once under load.
    @Test func aSignalRightAfterInstallIsNotLost() {
        let interrupted = DispatchSemaphore(value: 0)
        let trap = SignalTrap.install { interrupted.signal() }
        defer { trap.uninstall() }
        let raised = DispatchSemaphore(value: 0)
        let thread = Thread {
            var terminate = sigset_t()
            sigemptyset(&terminate)
            sigaddset(&terminate, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &terminate, nil)
            pthread_kill(pthread_self(), SIGTERM)  // handled on this thread before pthread_kill returns
            raised.signal()
        }
        thread.start()
        raised.wait()
        // A deadline for the failure only.
        #expect(interrupted.wait(timeout: .now() + 30) == .success, "onInterrupt never ran")
        #expect(trap.interruption == .terminated)
        #expect(trap.wasInterrupted)
    }
}
