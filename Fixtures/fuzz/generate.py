#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzz/, docs/ARCHITECTURE.md "Fuzzing") next to this script.

One directory per target, a handful of small valid (and a few almost valid) inputs each, in the input format the
target's doc comment describes. Built from the golden frames in Fixtures/wire and a small encoder of the wire
format (docs/PROTOCOL.md), standard library only; zstd frames are written by hand (raw and RLE blocks), and
compressed ones by the `zstd` command when it is installed (Debian package zstd; skipped otherwise).
Deterministic: run it again and `git diff` shows no change.

    python3 Fixtures/fuzz/generate.py
"""

import hashlib
import importlib.util
import os
import shutil
import struct
import subprocess
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
WIRE = os.path.join(HERE, "..", "wire")
TRANSFER_ID = bytes(range(0x10, 0x20))
CHUNK_SIZE = 65_536


def wire_generator():
    """Fixtures/wire/generate-transfer.py as a module (its hand-written zstd frame with a prefix)."""
    spec = importlib.util.spec_from_file_location("generate_transfer", os.path.join(WIRE, "generate-transfer.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden(name):
    with open(os.path.join(WIRE, name + ".bin"), "rb") as file:
        return file.read()


def frame(kind, payload):
    return struct.pack(">HI", kind, len(payload)) + payload


def str8(text):
    data = text.encode("utf-8")
    return struct.pack(">B", len(data)) + data


def str16(text):
    data = text.encode("utf-8")
    return struct.pack(">H", len(data)) + data


def raw_deflate(data, level=9):
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def zstd_frame(blocks, content_size):
    """One zstd frame (RFC 8878) with a single-segment header and an 8-byte content size; blocks are
    (type, payload, regenerated size) with type 0 raw or 1 RLE."""
    out = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + struct.pack("<Q", content_size)
    for index, (block_type, payload, size) in enumerate(blocks):
        last = 1 if index == len(blocks) - 1 else 0
        header = last | (block_type << 1) | (size << 3)
        out += struct.pack("<I", header)[:3] + payload
    return out


def zstd_compressed(data):
    """A compressed zstd frame with its content size and checksum, from the zstd command, or None without it."""
    if shutil.which("zstd") is None:
        return None
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "raw")
        with open(path, "wb") as file:
            file.write(data)
        return subprocess.run(["zstd", "-q", "-c", "-3", path], check=True, stdout=subprocess.PIPE).stdout


def offer_entry(path, size, media_type="", width=0, height=0):
    return (str16(path) + struct.pack(">QHqI", size, 0o644, 1767225600, 0) + str8(media_type)
            + struct.pack(">II", width, height))


def offer_payload(entries, chunk_size=CHUNK_SIZE, codecs=0x03):
    return TRANSFER_ID + struct.pack(">IBI", chunk_size, codecs, len(entries)) + b"".join(entries)


def chunk_payload(file_index, offset, raw, codec):
    data = {0: raw, 1: raw_deflate(raw)}.get(codec)
    if codec == 2:
        data = zstd_frame([(0, raw, len(raw))], len(raw))
    header = TRANSFER_ID + struct.pack(">IQIB", file_index, offset, len(raw), codec) + hashlib.sha256(raw).digest()
    return header + data


def file_end_payload(file_index, content, chunk_size=CHUNK_SIZE):
    """fileEnd with the file digest (PROTOCOL.md 11.7): SHA-256 over the SHA-256 of each chunk."""
    chunks = [content[start:start + chunk_size] for start in range(0, len(content), chunk_size)]
    digest = hashlib.sha256(b"".join(hashlib.sha256(piece).digest() for piece in chunks)).digest()
    return TRANSFER_ID + struct.pack(">I", file_index) + digest


def record(kind, payload):
    """A FuzzTransferFrames record: kind - 0x0100 as u8, u16 length, payload."""
    assert len(payload) <= 0xFFFF
    return struct.pack(">BH", kind - 0x0100, len(payload)) + payload


def seeds_frame_decoder():
    session = b"".join(golden(name) for name in [
        "hello", "connectionRequest", "accept", "message", "heartbeat", "deny", "goodbye", "unknown-ignorable"])
    transfer = b"".join(golden(name) for name in [
        "transfer-offer", "transfer-offer-reply", "transfer-chunk", "transfer-chunk-ack", "transfer-file-end",
        "transfer-file-result", "transfer-cancel"])
    return {
        # flags, n, n + 1 split sizes, stream
        "preface-hello-whole": bytes([0x02, 0, 255]) + golden("preface") + golden("hello-extended"),
        "preface-session-bytewise": bytes([0x03, 0, 1]) + golden("preface") + session,
        "session-split": bytes([0x01, 2, 7, 0, 64]) + session,
        "transfer-split": bytes([0x01, 3, 5, 40, 1, 200]) + transfer,
        "hello-limit-too-large": bytes([0x00, 0, 3]) + golden("hello") + frame(0x0005, b"x" * 1025),
        "truncated-frame": bytes([0x01, 0, 16]) + golden("transfer-offer")[:-10],
    }


def seeds_offer():
    entries = [
        offer_entry("photo.jpg", 123456, "image/jpeg", 4032, 3024),
        offer_entry("docs/notes.txt", 0),
        offer_entry("Zo\u00eb/caf\u00e9.png", 70000, "image/png", 16, 16),
    ]
    return {
        "golden": golden("transfer-offer")[6:],
        "three-files": offer_payload(entries),
        "parent-reference": offer_payload([offer_entry("../.ssh/authorized_keys", 10)]),
        "absolute": offer_payload([offer_entry("/etc/passwd", 10)]),
        "bidi-name": offer_payload([offer_entry("invoice\u202Egpj.exe", 10)]),
        "staging-name": offer_payload([offer_entry(".ferry-staging/x", 10)]),
        "trailing-bytes": offer_payload([offer_entry("a", 1)], chunk_size=4_194_304) + b"\x00\x01",
        "swarm": golden("transfer-offer-swarm")[6:],
        "swarm-none-then-trailing": offer_payload([offer_entry("a", 1)]) + b"\x00\x00\xff",
        "swarm-count-too-large": offer_payload([offer_entry("a", 1)]) + b"\xff\xff" + bytes(range(0x20, 0x30)),
        # The folders section (PROTOCOL.md 11.3): the vector, and folders a receiver must refuse.
        "folders": golden("transfer-offer-folders")[6:],
        "folders-escaping": offer_payload([offer_entry("a", 1)]) + b"\x00\x00" + b"\x00" * 4 + b"\x01"
        + struct.pack(">I", 3) + b"".join(struct.pack(">H", len(p)) + p
                                          for p in [b"../up", b"/abs", b".ferry-staging/x"]),
        "folders-count-too-large": offer_payload([offer_entry("a", 1)]) + b"\x00\x00" + b"\x00" * 4 + b"\x00"
        + struct.pack(">I", 10_001) + b"\x00\x01a" * 4,
    }


def seeds_name_validator():
    names = {
        "plain": "photo.jpg",
        "nested": "holiday/2026/IMG_0001.JPG",
        "unicode": "Zo\u00eb/caf\u00e9 \u65e5\u672c.txt",
        "hidden": ".config/x",
        "parent": "a/../../b",
        "absolute": "/etc/shadow",
        "empty-component": "a//b",
        "dot": "./a",
        "trailing-slash": "dir/",
        "escape": "red\x1b[31m.txt",
        "c1": "a\u0085b",
        "bidi": "exe.\u202Egpj",
        "reserved": "x/.ferry-staging",
        "combining-slash": "a/\u0301b",
    }
    seeds = {name: text.encode("utf-8") for name, text in names.items()}
    seeds["nul"] = b"a\x00b"
    seeds["invalid-utf8"] = b"a\xff\xfe/b"
    seeds["long-component"] = b"a" * 256
    return seeds


def seeds_inflate():
    text = b"ferry ferry ferry ferry ferry ferry\n" * 4
    zeros = bytes(4096)
    seeds = {}
    for name, raw in [("text", text), ("zeros", zeros), ("byte", b"x")]:
        seeds["zlib-" + name] = bytes([0]) + struct.pack(">I", len(raw))[1:] + raw_deflate(raw)
        seeds["zstd-raw-" + name] = bytes([1]) + struct.pack(">I", len(raw))[1:] + zstd_frame(
            [(0, raw, len(raw))], len(raw))
    for name, raw in [("text", text), ("zeros", zeros)]:
        compressed = zstd_compressed(raw)
        if compressed is not None:
            seeds["zstd-" + name] = bytes([1]) + struct.pack(">I", len(raw))[1:] + compressed
    seeds["zstd-rle"] = bytes([1]) + struct.pack(">I", 8192)[1:] + zstd_frame(
        [(1, b"a", 4096), (1, b"b", 4096)], 8192)
    seeds["zlib-bomb-declared-short"] = bytes([0]) + struct.pack(">I", 100)[1:] + raw_deflate(bytes(65536))
    seeds["zlib-stored-block"] = bytes([0]) + struct.pack(">I", len(text))[1:] + raw_deflate(text, level=0)
    seeds["zlib-empty"] = bytes([0, 0, 0, 0]) + raw_deflate(b"")
    # zstdPrefixed: mode byte 3, the raw length, a u16 prefix length and the prefix, then the frame: one match of
    # 36 bytes at distance 36, the whole prefix again.
    line = b"ferry ferry ferry ferry ferry ferry\n"
    prefixed = wire_generator().zstd_one_match(36, 36, 36)
    seeds["zstd-prefixed"] = bytes([3]) + struct.pack(">I", 36)[1:] + struct.pack(">H", len(line)) + line + prefixed
    compressed = zstd_compressed(text)
    if compressed is not None:
        seeds["zstd-prefixed-unused"] = bytes([3]) + struct.pack(">I", len(text))[1:] + struct.pack(">H", 4) + b"abcd" \
            + compressed
    return seeds


def seeds_transfer_frames():
    small = b"hello\n"
    big = bytes(CHUNK_SIZE) + b"tail"
    one_file = offer_payload([offer_entry("a.txt", len(small))])
    two_chunks = offer_payload([offer_entry("zeros.bin", len(big)), offer_entry("b/empty", 0)])
    golden_records = b"".join(
        record(struct.unpack(">H", data[:2])[0], data[6:])
        for data in (golden(name) for name in [
            "transfer-offer", "transfer-offer-reply", "transfer-chunk", "transfer-chunk-prefixed",
            "transfer-chunk-ack", "transfer-file-end",
            "transfer-file-result", "transfer-cancel"]))
    swarm_records = b"".join(
        record(struct.unpack(">H", data[:2])[0], data[6:])
        for data in (golden(name) for name in [
            "transfer-offer-swarm", "transfer-offer-reply-relay", "transfer-chunk-ack-peer", "transfer-swarm-members",
            "transfer-chunk-digests", "transfer-swarm-have", "transfer-swarm-request", "transfer-swarm-refuse",
            "transfer-swarm-report"]))
    swarm_id = bytes(range(0x20, 0x30))
    return {
        "goldens": golden_records,
        # The swarm frames (PROTOCOL.md 11.11): each golden, then a swarm offer followed by member-to-member frames.
        "swarm-goldens": swarm_records,
        "swarm-offer-then-member-frames": record(0x0100, golden("transfer-offer-swarm")[6:])
        + record(0x0108, TRANSFER_ID + struct.pack(">IIH", 0, 0, 1) + struct.pack(">H", 1)
                 + hashlib.sha256(small).digest())
        + record(0x0109, swarm_id + struct.pack(">IHII", 0, 1, 0, 1))
        + record(0x010A, swarm_id + struct.pack(">IIB", 0, 0, 1))
        + record(0x0102, swarm_id + chunk_payload(0, 0, small, 0)[16:])
        + record(0x010B, swarm_id + struct.pack(">IIB", 0, 0, 3))
        + record(0x010C, TRANSFER_ID + struct.pack(">HBII", 1, 1, 0, 0)),
        "one-file-raw": record(0x0100, one_file) + record(0x0102, chunk_payload(0, 0, small, 0))
        + record(0x0104, file_end_payload(0, small)),
        "one-file-zstd-end-first": record(0x0100, one_file) + record(0x0104, file_end_payload(0, small))
        + record(0x0102, chunk_payload(0, 0, small, 2)),
        "two-chunks-zlib": record(0x0100, two_chunks) + record(0x0102, chunk_payload(0, 0, bytes(CHUNK_SIZE), 1))
        + record(0x0102, chunk_payload(0, CHUNK_SIZE, b"tail", 0)) + record(0x0104, file_end_payload(0, big))
        + record(0x0104, file_end_payload(1, b"")),
        "corrupt-then-resend": record(0x0100, one_file)
        + record(0x0102, chunk_payload(0, 0, small, 0)[:-1] + b"?") + record(0x0102, chunk_payload(0, 0, small, 0))
        + record(0x0104, file_end_payload(0, small)),
    }


def seeds_datagram():
    header = golden("datagram")[:24]
    tag = bytes(range(16))
    # After the 24-byte header: groups of a flags byte and a u64, read as further sequence numbers.
    replays = struct.pack(">BQ", 1, 7) + struct.pack(">BQ", 1, 7) + struct.pack(">BQ", 3, 3)
    replays += struct.pack(">BQ", 7, 70) + struct.pack(">BQ", 2, 63) + struct.pack(">BQ", 1, 2**64 - 1)
    return {
        "datagram": golden("datagram"),
        "tag-only": header + tag,
        "replays": header + replays,
    }


LOCALSEND = os.path.join(HERE, "..", "localsend")


def localsend(name):
    with open(os.path.join(LOCALSEND, name + ".json"), "rb") as file:
        return file.read().strip()


def seeds_http_request():
    # Input: a byte n, n+1 split sizes, then the request stream (Fuzz/Sources/FuzzHTTPRequest).
    splits = bytes([2, 7, 1, 200])
    body = localsend("app-1.18-prepare-upload")
    prepare = (b"POST /api/localsend/v2/prepare-upload?pin=123456 HTTP/1.1\r\nHost: 10.0.0.2:53317\r\n"
               b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
    chunked = (b"POST /api/localsend/v2/upload?sessionId=s&fileId=f%20id&token=t+1 HTTP/1.1\r\nhost: h\r\n"
               b"transfer-encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
               b"5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n")
    info = b"GET /api/localsend/v1/info?fingerprint=abc HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
    old = b"\r\nPOST /api/localsend/v2/cancel?sessionId=s HTTP/1.0\r\nContent-Length: 2\r\n\r\nok"
    return {
        "prepare-upload": splits + prepare,
        "chunked-upload": splits + chunked,
        "pipelined": splits + info.replace(b"Connection: close\r\n", b"") + chunked + prepare,
        "http10": splits + old,
        "smuggle": splits + b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
    }


def seeds_localsend_json():
    # Input: a selector byte (0 device, 1 prepare-upload, 2 reply, 3 error body), then the body.
    seeds = {
        "app-1.17-announcement": b"\x00" + localsend("app-1.17-announcement"),
        "app-1.18-announcement": b"\x00" + localsend("app-1.18-announcement"),
        "v1-info": b"\x00" + localsend("v1-info"),
        "reply": b"\x02" + localsend("app-1.18-prepare-upload-reply"),
        "error": b"\x03" + b'{"message":"Invalid PIN \\u00e9\\ud83d\\ude00"}',
    }
    for name in ["app-1.17-prepare-upload", "app-1.18-prepare-upload", "localsendd-0.1.1-prepare-upload",
                 "localsend-cli-0.1.1-prepare-upload", "localsend-0.1.2-prepare-upload"]:
        seeds[name] = b"\x01" + localsend(name)
    return seeds


TARGETS = {
    "FuzzFrameDecoder": seeds_frame_decoder,
    "FuzzBeacon": lambda: {"beacon": golden("beacon"), "beacon-query": golden("beacon-query"),
                           "beacon-extension": golden("beacon") + b"\x01\x02\x03"},
    "FuzzDatagram": seeds_datagram,
    "FuzzOffer": seeds_offer,
    "FuzzNameValidator": seeds_name_validator,
    "FuzzInflate": seeds_inflate,
    "FuzzTransferFrames": seeds_transfer_frames,
    "FuzzHTTPRequest": seeds_http_request,
    "FuzzLocalSendJSON": seeds_localsend_json,
}


def main():
    for target, make in TARGETS.items():
        directory = os.path.join(HERE, target)
        # Regenerated seeds replace the old ones; inputs kept from a fuzzing find (regression-*) stay.
        os.makedirs(directory, exist_ok=True)
        for name in os.listdir(directory):
            if not name.startswith("regression-"):
                os.remove(os.path.join(directory, name))
        for name, data in make().items():
            with open(os.path.join(directory, name + ".bin"), "wb") as file:
                file.write(data)


if __name__ == "__main__":
    main()
