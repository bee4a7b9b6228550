/// Reads of the identity fields shared by the hello and the beacon.
extension ByteReader {
    mutating func readDeviceID(_ field: String) throws(WireError) -> DeviceID {
        guard let deviceID = DeviceID(bytes: try readBytes(count: DeviceID.length, field)) else {
            throw .malformed("\(context): bad \(field)")
        }
        return deviceID
    }

    mutating func readPeerMode(_ field: String) throws(WireError) -> PeerMode {
        let raw = try readUInt8(field)
        guard let mode = PeerMode(rawValue: raw) else {
            throw .invalidField("\(field): unknown value \(raw)")
        }
        return mode
    }
}
