import CCurl
import COpenSSL
import FerrySecurity
import FerryWire
import Foundation
import Glibc
import Synchronization

/// One request while libcurl runs it: its body source, the response collected so far, the pin, and the flags its
/// callbacks set. libcurl calls back on the request's own thread, which `run` starts and waits for.
///
/// `@unchecked Sendable`: everything but `cancelled` is touched only by that thread between `curl_easy_perform`'s
/// start and end; `cancelled` is atomic (set by the waiting task's cancellation handler).
final class CurlRequest: @unchecked Sendable {
    enum Body {
        case bytes([UInt8])
        case file(descriptor: Int32, offset: Int64, length: Int64)

        var length: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .file(_, _, let length): length
            }
        }
    }

    /// Bytes of an error response kept for the message.
    static let errorBodyBytes = 1024
    /// libcurl's upload buffer: the most of a file in memory at once.
    static let uploadBufferBytes = 256 << 10

    let identity: LocalSendIdentity
    let pin: CertificatePin
    let body: Body
    let maxResponseBytes: Int
    let progress: (@Sendable (Int64) -> Void)?
    let cancelled = Atomic<Bool>(false)
    /// What a file body must hash to (checked before its last piece goes out); nil: not checked.
    let expectedSHA256: [UInt8]?
    /// Hashes a file body as it is read, when `expectedSHA256` is given.
    private let hasher: SHA256Hasher?

    private var response: [UInt8] = []
    private var responseTooLarge = false
    private var bodySent: Int64 = 0
    private var sourceError: String?
    private var progressReported: Int64 = -1
    /// The most body bytes one read callback produced: the most of a file in this process's memory at once (tests).
    private(set) var largestPiece = 0

    init(
        identity: LocalSendIdentity, pin: CertificatePin, body: Body, maxResponseBytes: Int,
        progress: (@Sendable (Int64) -> Void)?, sha256: [UInt8]? = nil
    ) {
        self.expectedSHA256 = sha256
        hasher = sha256 == nil ? nil : SHA256Hasher()
        self.identity = identity
        self.pin = pin
        self.body = body
        self.maxResponseBytes = maxResponseBytes
        self.progress = progress
    }

    /// Runs the request on a new thread; cancelling the calling task makes libcurl stop at its next callback
    /// (at least once a second, and after every piece of data).
    func run(
        url: String, contentType: String, connectTimeout: Duration, stallTimeout: Duration?, totalTimeout: Duration?
    ) async throws(HTTPSClientError) -> HTTPSResponse {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<HTTPSResponse, HTTPSClientError>, Never>) in
                let thread = Thread {
                    continuation.resume(
                        returning: self.perform(
                            url: url, contentType: contentType, connectTimeout: connectTimeout,
                            stallTimeout: stallTimeout, totalTimeout: totalTimeout))
                }
                thread.name = "ferry-https"
                thread.start()
            }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }
        return try result.get()
    }

    private func perform(
        url: String, contentType: String, connectTimeout: Duration, stallTimeout: Duration?, totalTimeout: Duration?
    ) -> Result<HTTPSResponse, HTTPSClientError> {
        guard CurlLibrary.ready, let handle = curl_easy_init() else {
            return .failure(.failed("libcurl could not start a request"))
        }
        defer { curl_easy_cleanup(handle) }
        let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorText.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorText.deallocate() }
        var headers: UnsafeMutablePointer<curl_slist>?
        headers = curl_slist_append(headers, "Content-Type: \(contentType)")
        headers = curl_slist_append(headers, "Expect:")  // no 100-continue round trip
        defer { curl_slist_free_all(headers) }
        let user = Unmanaged.passUnretained(self).toOpaque()

        var configured = [
            ferry_curl_setopt_string(handle, CURLOPT_URL, url),
            ferry_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "https"),
            ferry_curl_setopt_string(handle, CURLOPT_PROXY, ""),
            ferry_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            ferry_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1),
            ferry_curl_setopt_long(handle, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2),
            // Over TLS 1.2 only ECDHE with an AEAD, as our server offers; TLS 1.3's suites stay OpenSSL's default.
            ferry_curl_setopt_string(handle, CURLOPT_SSL_CIPHER_LIST, HTTPSContext.tls12CipherList),
            // libcurl's own checks want a CA chain and a host name; the pin in the SSL_CTX callback replaces them.
            ferry_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 0),
            ferry_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 0),
            ferry_curl_setopt_long(handle, CURLOPT_SSL_SESSIONID_CACHE, 0),
            ferry_curl_setopt_long(handle, CURLOPT_FORBID_REUSE, 1),
            ferry_curl_set_ssl_context_callback(handle, Self.configureTLS),
            ferry_curl_setopt_pointer(handle, CURLOPT_SSL_CTX_DATA, user),
            ferry_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(connectTimeout)),
            ferry_curl_setopt_list(handle, CURLOPT_HTTPHEADER, headers),
            ferry_curl_setopt_long(handle, CURLOPT_POST, 1),
            ferry_curl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.length)),
            ferry_curl_set_read_callback(handle, Self.readBody),
            ferry_curl_setopt_pointer(handle, CURLOPT_READDATA, user),
            ferry_curl_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferBytes),
            ferry_curl_set_write_callback(handle, Self.receiveBody),
            ferry_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, user),
            ferry_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0),
            ferry_curl_set_progress_callback(handle, Self.reportProgress),
            ferry_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, user),
            ferry_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText),
        ]
        if let stallTimeout {
            configured.append(ferry_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
            configured.append(
                ferry_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, Int(stallTimeout.components.seconds))))
        }
        if let totalTimeout {
            configured.append(ferry_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(totalTimeout)))
        }
        if let refused = configured.first(where: { $0 != CURLE_OK }) {
            return .failure(.failed("libcurl refused an option: \(String(cString: curl_easy_strerror(refused)))"))
        }

        let code = curl_easy_perform(handle)
        let text = String(cString: errorText)
        let reason = text.isEmpty ? String(cString: curl_easy_strerror(code)) : text
        if code == CURLE_OK {
            let status = ferry_curl_response_code(handle)
            guard (200..<300).contains(status) else {
                let excerpt = String(decoding: response.prefix(Self.errorBodyBytes), as: UTF8.self)
                return .failure(.status(status, body: excerpt))
            }
            return .success(HTTPSResponse(status: status, body: response))
        }
        if let presented = pin.presented, presented != pin.expected {
            return .failure(.wrongCertificate(expected: pin.expected, presented: presented))
        }
        if cancelled.load(ordering: .relaxed) { return .failure(.cancelled) }
        if responseTooLarge { return .failure(.responseTooLarge(limit: maxResponseBytes)) }
        if let sourceError { return .failure(.sourceFailed(sourceError)) }
        switch code {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST: return .failure(.refused(reason))
        case CURLE_OPERATION_TIMEDOUT: return .failure(.timedOut(reason))
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM:
            return .failure(.handshakeFailed(reason))
        default: return .failure(.failed(reason))
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    private static func request(_ user: UnsafeMutableRawPointer?) -> CurlRequest {
        Unmanaged<CurlRequest>.fromOpaque(user!).takeUnretainedValue()
    }

    /// CURLOPT_SSL_CTX_FUNCTION: our certificate and key, and the pin, on the connection's fresh `SSL_CTX`.
    private static let configureTLS: ferry_curl_ssl_context_callback = { _, sslContext, user in
        guard let sslContext else { return CURLE_SSL_CERTPROBLEM }
        let request = request(user)
        return request.identity.configureClient(OpaquePointer(sslContext), pin: request.pin)
            ? CURLE_OK : CURLE_SSL_CERTPROBLEM
    }

    /// CURLOPT_READFUNCTION: the next piece of the body, straight into libcurl's buffer.
    private static let readBody: ferry_curl_data_callback = { buffer, size, count, user in
        let request = request(user)
        guard let buffer else { return ferry_curl_read_abort() }
        return request.fill(UnsafeMutableRawPointer(buffer), capacity: size * count)
    }

    /// CURLOPT_WRITEFUNCTION: response bytes, kept up to the limit.
    private static let receiveBody: ferry_curl_data_callback = { buffer, size, count, user in
        let request = request(user)
        let length = size * count
        guard request.response.count + length <= request.maxResponseBytes else {
            request.responseTooLarge = true
            return 0  // libcurl stops with CURLE_WRITE_ERROR
        }
        if let buffer, length > 0 {
            request.response.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: length))
        }
        return length
    }

    /// CURLOPT_XFERINFOFUNCTION: reports the body bytes sent, and stops the request once it was cancelled.
    private static let reportProgress: ferry_curl_progress_callback = { user, _, _, _, uploaded in
        let request = request(user)
        if request.cancelled.load(ordering: .relaxed) { return 1 }
        let sent = min(Int64(uploaded), request.body.length)
        if sent != request.progressReported, let progress = request.progress {
            request.progressReported = sent
            progress(sent)
        }
        return 0
    }

    private func fill(_ buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        if cancelled.load(ordering: .relaxed) { return ferry_curl_read_abort() }
        let remaining = body.length - bodySent
        let wanted = Int(min(Int64(capacity), remaining))
        guard wanted > 0 else { return 0 }
        switch body {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { raw in
                buffer.copyMemory(from: raw.baseAddress! + Int(bodySent), byteCount: wanted)
            }
            bodySent += Int64(wanted)
            return wanted
        case .file(let descriptor, let offset, let length):
            while true {
                let count = pread(descriptor, buffer, wanted, off_t(offset + bodySent))
                if count < 0, errno == EINTR { continue }
                if count < 0 {
                    sourceError = String(cString: strerror(errno))
                    return ferry_curl_read_abort()
                }
                if count == 0 {
                    sourceError = "the file ended after \(bodySent) of \(length) bytes"
                    return ferry_curl_read_abort()
                }
                if let hasher {
                    hasher.update(UnsafeRawBufferPointer(start: buffer, count: count))
                    // The last piece goes out only when the whole body hashes as offered: else the receiver gets a
                    // short body and keeps nothing of it.
                    if bodySent + Int64(count) == length, hasher.finalize() != expectedSHA256 {
                        sourceError = HTTPSClient.changedText
                        return ferry_curl_read_abort()
                    }
                }
                bodySent += Int64(count)
                largestPiece = max(largestPiece, count)
                return count
            }
        }
    }
}

/// `curl_global_init`, once per process, before the first handle (libcurl asks for it before threads use it).
enum CurlLibrary {
    static let ready: Bool = ferry_curl_global_init() == CURLE_OK
}
