import FerryWire
import Testing

@testable import FerryCLI

/// The JSON lines' `deviceID` is the device's own text whichever device came before (the last one's text is kept
/// for the next line, which almost always names the same peer).
@Suite struct DeviceIDTextTests {
    @Test func eachDeviceIDIsWrittenAsItselfWhateverCameBefore() throws {
        let first = try #require(DeviceID(bytes: [UInt8](repeating: 7, count: 32)))
        let second = try #require(DeviceID(bytes: [UInt8](repeating: 9, count: 32)))
        for id in [first, first, second, first, second, second] {
            #expect(TransferReporter.deviceIDText(id) == id.description)
        }
    }
}
