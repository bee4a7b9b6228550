import FerryStateMachines
import FerrySystem
import FerryWire

/// Every error of the session layer: what went wrong and, where the user can act, what to do.
public enum SessionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No peer with this ID was ever seen by the session.
    case unknownPeer(PeerID)
    /// The peer is known, but not where to reach it (no discovery, no manual address).
    case peerHasNoAddress(String)
    /// The peer is not connected (a message or transfer needs a connected link).
    case notConnected(String)
    /// The peer denied the connection request, with its reason.
    case denied(peer: String, reason: DenyReason, detail: String)
    /// The peer refused the connection for now: it closed it before its preface (too many connections from our
    /// address are waiting) or during the TLS handshake without an alert (too many from everyone): PROTOCOL.md
    /// 10.6. Trying again later may succeed.
    case busy(peer: String, detail: String)
    /// A connection request to this peer is already pending.
    case alreadyConnecting(String)
    /// The peer did not answer the connection request within the timeout.
    case connectTimedOut(peer: String, after: Duration)
    /// The peer could not be reached (refused, unreachable, reset).
    case connectFailed(peer: String, underlying: String)
    /// The connected link ended: the peer left, went silent, or was cut off.
    case disconnected(peer: String, reason: String)
    /// The peer sent something the protocol forbids; its link was closed.
    case protocolViolation(peer: String, detail: String)
    /// A reliable message over `Session.maxReliableMessageSize`; nothing was sent.
    case messageTooLarge(size: Int, limit: Int)
    /// An unreliable message over `Session.maxUnreliableMessageSize`; nothing was sent.
    case datagramTooLarge(size: Int, limit: Int)
    /// The configuration cannot be used (a name too long, a limit out of range, TLS could not be set up).
    case invalidConfiguration(String)
    /// The TCP port asked for is taken.
    case portInUse(UInt16)
    /// Multicast discovery could not start; manual addresses still work.
    case discoveryUnavailable(String)
    /// The session is closed: nothing more can be sent or connected.
    case sessionClosed
    /// The peer could not be authenticated: a bad preface, a failed TLS handshake, a certificate that does not
    /// match the device ID it announced.
    case authenticationFailed(peer: String, detail: String)
    /// A peer showed the name of a pinned peer with another key: someone may be impersonating it.
    case pinnedKeyChanged(name: String, pinned: DeviceID, presented: DeviceID)
    /// A swarm link (`Session.connect(toMember:at:timeout:)`) reached another device than the member it was opened
    /// to: the address is stale, or someone else answers there. The link was closed.
    case unexpectedDevice(address: String, expected: DeviceID, presented: DeviceID)
    /// A swarm link was asked for a device no live vouch names (`Session.vouch(for:reason:)`).
    case notVouched(DeviceID)

    /// What went wrong, for a person, and what to do where the user can act.
    public var description: String {
        switch self {
        case .unknownPeer(let id):
            return "no peer with ID \(id) is known in this session"
        case .peerHasNoAddress(let name):
            return "peer \(name) has no known address; give one with --peer HOST:PORT"
        case .notConnected(let name):
            return "peer \(name) is not connected"
        case .denied(let peer, .untrusted, _):
            return "\(peer) accepts trusted peers only: its owner can pin this device with 'ferry trust add' (its"
                + " 'ferry receive' prints the command with this device's ID)"
        case .denied(let peer, let reason, let detail):
            return "peer \(peer) denied the connection: \(reason)" + (detail.isEmpty ? "" : " (\(detail))")
        case .busy(let peer, let detail):
            return "peer \(peer) is busy: \(detail)"
        case .alreadyConnecting(let peer):
            return "a connection request to \(peer) is already pending"
        case .connectTimedOut(let peer, let after):
            return "peer \(peer) did not answer the connection request"
                + (after > .zero ? " within \(after.secondsText)" : " in time")
        case .connectFailed(let peer, let underlying):
            return "could not reach \(peer): \(underlying)"
        case .disconnected(let peer, let reason):
            return "peer \(peer) disconnected: \(reason)"
        case .protocolViolation(let peer, let detail):
            return "peer \(peer) broke the protocol: \(detail)"
        case .messageTooLarge(let size, let limit):
            return "a reliable message of \(size) bytes is larger than the limit of \(limit) bytes"
        case .datagramTooLarge(let size, let limit):
            return "an unreliable message of \(size) bytes is larger than the limit of \(limit) bytes;"
                + " send it reliably instead"
        case .invalidConfiguration(let text):
            return text
        case .portInUse(let port):
            return "TCP port \(port) is already in use; choose another with --port, or --port 0 for any free port"
        case .discoveryUnavailable(let text):
            return "discovery is unavailable (\(text)); peers can still be reached with --peer HOST:PORT"
        case .sessionClosed:
            return "the session is closed"
        case .authenticationFailed(let peer, let detail):
            return "could not authenticate peer \(peer): \(detail)"
        case .pinnedKeyChanged(let name, let pinned, let presented):
            return "refused a peer named \(name): it presents the key \(presented.shortDescription), but you trusted"
                + " \(name) with the key \(pinned.shortDescription), so someone may be impersonating it. If \(name)"
                + " really has a new identity (reinstalled), check with its owner, then run"
                + " `ferry trust remove \(pinned.shortDescription)` and pair again."
        case .unexpectedDevice(let address, let expected, let presented):
            return "the peer at \(address) is device \(presented.shortDescription), not the broadcast member"
                + " \(expected.shortDescription) the sender named there, so the link was closed; the member may"
                + " have moved, and its chunks come from the other members or the sender"
        case .notVouched(let deviceID):
            return "device \(deviceID.shortDescription) is not a member of any broadcast this session takes part in"
        }
    }
}

extension SessionError {
    /// Why the peer cannot take us now but may later ("16 of 16 peers connected"), nil for every other error: it
    /// is full (deny `serverFull`), or it closed the connection before its preface or during the TLS handshake
    /// without an alert (too many connections waiting: PROTOCOL.md 10.6). A caller that has time left retries.
    public var busyReason: String? {
        switch self {
        case .busy(_, let detail):
            return detail
        case .denied(_, .serverFull, let detail):
            return detail.isEmpty ? "\(DenyReason.serverFull)" : detail
        default:
            return nil
        }
    }
}

extension Duration {
    /// "2.5 s"
    var secondsText: String {
        let (seconds, attoseconds) = components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) s" : "\(rounded) s"
    }
}

extension LinkStateMachine.CloseReason {
    /// The reason as a user reads it.
    var text: String {
        switch self {
        case .denied(let deny): return "denied: \(deny.reason)"
        case .deniedLocally(let deny): return "we denied it: \(deny.reason)"
        case .goodbye(let goodbye):
            let what: String
            switch goodbye.reason {
            case .disconnected: what = "it said goodbye"
            case .shuttingDown: what = "it said goodbye: its session closed"
            case .timedOut: what = "it said goodbye: it heard nothing from us within its disconnect timeout"
            case .protocolError: what = "it said goodbye: it saw a protocol error"
            case .notAccepted: what = "it did not accept us"
            default: what = "it said goodbye (\(goodbye.reason))"
            }
            return what + (goodbye.detail.isEmpty ? "" : " (\(goodbye.detail))")
        case .localDisconnect: return "disconnected here"
        case .timedOut(.liveness): return "no sign of life within the disconnect timeout"
        case .timedOut(let which): return "timed out (\(which))"
        case .protocolError(let detail): return "protocol error: \(detail)"
        case .securityFailure(let detail): return "not authenticated: \(detail)"
        case .streamEnded: return "the link was lost"
        case .probeFinished: return "probe finished"
        }
    }
}

extension SessionError {
    /// Why a TCP connection could not be opened, for a person, with what to do where the cause is common: nothing
    /// listening on that port, or no route to the address. Other errors as they are (`connect(): ...`).
    static func reaching(_ error: any Error) -> String {
        guard let system = error as? SystemError, system.call == "connect()" else { return "\(error)" }
        switch system.errno {
        case .connectionRefused:
            return "nothing accepts connections on that port (connection refused); start 'ferry receive' there, or"
                + " check the port it printed"
        case .hostUnreachable, .networkUnreachable:
            return "there is no route to that address (\(system.errno)); check the address, and that this machine"
                + " is on the same network"
        default:
            return "\(system)"
        }
    }
}
