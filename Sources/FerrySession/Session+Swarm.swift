import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire
import Synchronization

/// A vouch of `Session.vouch(for:reason:)`: hand it to `Session.revoke(_:)` to take it back.
public struct VouchToken: Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int

    /// "vouch#3", for logs.
    public var description: String { "vouch#\(rawValue)" }
}

/// What one vouch covers, and why it was given (for the log).
struct Vouch: Sendable {
    var devices: Set<DeviceID>
    var reason: String
}

/// The live vouches, behind a lock: taken back synchronously (`Session.revoke(_:)`), so that a vouch ends in the same
/// step as the swarm it was given for, and no link is admitted on it after (a revoke queued on the session's actor
/// left it live for a while, and a vouch whose token was lost stayed live for good).
final class VouchTable: Sendable {
    private let state = Mutex<(next: Int, vouches: [VouchToken: Vouch])>((0, [:]))

    func add(_ vouch: Vouch) -> VouchToken {
        state.withLock { state in
            state.next += 1
            let token = VouchToken(rawValue: state.next)
            state.vouches[token] = vouch
            return token
        }
    }

    func remove(_ token: VouchToken) -> Vouch? {
        state.withLock { $0.vouches.removeValue(forKey: token) }
    }

    func contains(_ deviceID: DeviceID) -> Bool {
        state.withLock { $0.vouches.values.contains { $0.devices.contains(deviceID) } }
    }
}

/// Swarm links: session links between the recipients of one broadcast, without a prompt, only to and from the device
/// IDs the transfer engine vouches for (docs/PROTOCOL.md 10.2 and 10.8, docs/SECURITY.md "Swarm links").
///
/// Why in the session: admission and authentication live here; the engine only says whom it expects (the members
/// named in an offer the user accepted), and the session keeps every other rule as it is. A vouch grants a link and
/// nothing else: an offer on a swarm link is judged as if the vouch did not exist (`swarmLinkTakesOffers`).
extension Session {
    /// Vouches for `devices` until `revoke(_:)`: a connection request whose TLS-proven device ID is one of them is
    /// accepted without asking anyone and without the accept policy (`ask` and `trusted` alike), and the link is a
    /// swarm link (`PeerInfo.isSwarmLink`). Only the transfer engine should call this, for the members named in an
    /// offer the user accepted.
    ///
    /// The session's own refusals stand: a client, a session whose server state is not accepting connections, or
    /// one whose accept policy is `none` refuses a vouched device as any other (it can still dial the device with
    /// `connect(toMember:at:timeout:)`); a second link to a connected peer is resolved as PROTOCOL.md 10.4 says.
    /// Swarm links are neither bounded by nor counted in `maxPeers` (the vouched set bounds them), and their
    /// requests do not use up the prompt rate. `reason` appears in the log.
    public func vouch(for devices: Set<DeviceID>, reason: String) -> VouchToken {
        let token = vouches.add(Vouch(devices: devices, reason: reason))
        log("\(token): vouching for \(devices.count) devices (\(reason))")
        return token
    }

    /// Takes a vouch back at once (synchronous: the caller's next step already sees it gone): new links from its
    /// devices are judged by the ordinary rules again (unless another live vouch names them). Links already open
    /// stay open; the caller closes those it no longer wants.
    public nonisolated func revoke(_ token: VouchToken) {
        guard let vouch = vouches.remove(token) else { return }
        configuration.log?(1, "\(token): revoked (\(vouch.reason))")
    }

    /// Whether a live vouch names this device ID.
    public func isVouched(_ deviceID: DeviceID) -> Bool {
        vouches.contains(deviceID)
    }

    /// Opens a swarm link to a vouched member at `address` (the "ip:port" an offer named for it), PINNED to its
    /// device ID: the link is kept only when the device that answers proves `deviceID` with its certificate, and
    /// fails with `SessionError.unexpectedDevice` otherwise (closed before our connection request).
    ///
    /// Returns the member as a connected peer. A connected swarm link to that device is reused; when both members
    /// dial each other at once, one link survives on both sides (PROTOCOL.md 10.4) and both callers return it. The
    /// member's side admits the link by its own vouch; it is refused there (`SessionError.denied`) when it does not
    /// vouch for us. Throws `SessionError.notVouched` for a device no live vouch names.
    @discardableResult
    public func connect(
        toMember deviceID: DeviceID, at address: SocketAddress, timeout: Duration = .seconds(30)
    ) async throws -> PeerInfo {
        guard !isClosed else { throw SessionError.sessionClosed }
        guard isVouched(deviceID) else { throw SessionError.notVouched(deviceID) }
        if let member = peers.values.first(where: {
            $0.deviceID == deviceID && $0.connectedLink != nil && ($0.isSwarmLink || $0.address == address)
        }) {
            return member.info
        }
        return try await openLink(
            to: address, purpose: .connect(timeout: timeout), expectedPeer: nil,
            name: "\(deviceID.shortDescription) at \(address)", timeout: timeout, member: deviceID)
    }

    // MARK: Admission and pinning (called from Session+Links, Session+Trust, Session+Transfers)

    /// Whether this link's connection request is judged as a swarm link's: its TLS-proven device ID is vouched for
    /// and the accept policy is not `none`.
    func isSwarmRequest(on id: LinkID) -> Bool {
        guard configuration.acceptPolicy != .none, let certified = links[id]?.stream.peer?.deviceID else {
            return false
        }
        return isVouched(certified)
    }

    /// The decision on a vouched peer's request: the session's own refusals (client mode, server state, a peer
    /// already connected), then accept; neither `maxPeers` nor the policy.
    func swarmAdmission(for peerID: PeerID) -> Admission {
        Admission.decide(
            mode: configuration.mode, serverState: serverStateValue,
            alreadyConnected: peers[peerID]?.connectedLink != nil, connectedCount: 0, maxPeers: 1, policy: .all)
    }

    /// An initiator's pin: false (and the link refused, its callers told `unexpectedDevice`) when the device that
    /// answered is not the member we dialled.
    func checkPin(on id: LinkID, certified: DeviceID) -> Bool {
        guard let link = links[id], let expected = link.pinnedDevice, expected != certified else { return true }
        let error = SessionError.unexpectedDevice(
            address: link.remoteAddress.description, expected: expected, presented: certified)
        log(error.description)
        settleWaiters(of: id, .failure(error))
        refuse(
            id,
            detail: "this link was opened to device \(expected.shortDescription) but presents"
                + " \(certified.shortDescription)")
        return false
    }

    /// Whether an offer may come over this peer's swarm link: only when the ordinary rules would have connected the
    /// peer without asking (accept policy `all`, or `trusted` and the peer is pinned). A vouch grants a link and
    /// nothing else, and `ferry receive --accept trusted` relies on the session for who may offer.
    func swarmLinkTakesOffers(from peer: PeerRecord) -> Bool {
        switch configuration.acceptPolicy {
        case .all: return true
        case .trusted: return trustedDevices[peer.deviceID] != nil
        case .ask, .none: return false
        }
    }

    /// Cuts off a swarm link that carried an offer its peer may not make (see `swarmLinkTakesOffers`); true when it
    /// did, and the frame goes no further.
    func refusedOfferOnSwarmLink(_ frame: Frame, on id: LinkID) -> Bool {
        guard frame.kind == .offer, links[id]?.isSwarm == true, let peerID = links[id]?.peerID,
            let peer = peers[peerID], !swarmLinkTakesOffers(from: peer)
        else { return false }
        log("\(id): an offer on a swarm link from \(peer.deviceID.shortDescription), which is not accepted here")
        update(id) { machine, now in
            machine.disconnect(
                .protocolError,
                detail: "this link was admitted for a broadcast swarm only; offers need a link of their own",
                now: now)
        }
        return true
    }

    /// Connected peers that count against `maxPeers`: every one but swarm links.
    var connectedCountOutsideSwarm: Int {
        peers.values.count { $0.connectedLink != nil && !$0.isSwarmLink }
    }
}
