#!/usr/bin/env python3
"""Writes the transfer-protocol golden frames (docs/PROTOCOL.md sections 9 and 11) next to this script.

An encoder independent of the Swift one (standard library only), so the fixtures check the Swift codecs
against the specification rather than against themselves. Fixtures are never edited once released: run
this only to create new ones, then check `git diff` shows no change to existing files (1.0 is unreleased, and
PROTOCOL.md section 8 says which of its layouts changed in place before the release).

    python3 Fixtures/wire/generate-transfer.py            # write the .bin files
    python3 Fixtures/wire/generate-transfer.py --markdown # also print the section 9 entries
"""

import hashlib
import os
import struct
import sys
import zlib

TRANSFER_ID = bytes(range(0x10, 0x20))

KIND_OFFER = 0x0100
KIND_OFFER_REPLY = 0x0101
KIND_CHUNK = 0x0102
KIND_CHUNK_ACK = 0x0103
KIND_FILE_END = 0x0104
KIND_FILE_RESULT = 0x0105
KIND_TRANSFER_CANCEL = 0x0106

CODEC_ZLIB = 1
CODECS_ZLIB = 0x01
CODECS_ZLIB_ZSTD = 0x03


def frame(kind, payload):
    """6-byte header (kind u16, length u32, big-endian) and the payload."""
    return struct.pack(">HI", kind, len(payload)) + payload


def str8(text, limit=255):
    data = text.encode("utf-8")
    assert len(data) <= limit
    return struct.pack(">B", len(data)) + data


def str16(text, limit=4096):
    data = text.encode("utf-8")
    assert 1 <= len(data) <= limit
    return struct.pack(">H", len(data)) + data


def offer_entry(path, size, permissions, seconds, nanos, media_type, width, height):
    assert nanos < 1_000_000_000
    assert all(0x21 <= b <= 0x7E for b in media_type.encode("ascii"))
    return (str16(path) + struct.pack(">QHqI", size, permissions, seconds, nanos) + str8(media_type, 127)
            + struct.pack(">II", width, height))


def offer():
    files = [
        offer_entry("photos/Zo\u00eb.jpg", 123456, 0o644, 1767225600, 500_000_000, "image/jpeg", 4032, 3024),
        offer_entry("notes.txt", 0, 0o600, 1767225600, 0, "", 0, 0),
    ]
    payload = TRANSFER_ID + struct.pack(">IBI", 1_048_576, CODECS_ZLIB_ZSTD, len(files)) + b"".join(files)
    return frame(KIND_OFFER, payload)


def offer_reply():
    decisions = [(1, 0), (0, 0)]  # take the photo from its start, skip the notes
    payload = TRANSFER_ID + struct.pack(">BB", 1, 0) + str8("") + struct.pack(">BI", CODECS_ZLIB, len(decisions))
    payload += b"".join(struct.pack(">BQ", accepted, offset) for accepted, offset in decisions)
    return frame(KIND_OFFER_REPLY, payload)


CHUNK_RAW = b"ferry ferry ferry ferry ferry ferry\n"


def raw_deflate(data):
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    compressed = compressor.compress(data) + compressor.flush()
    decompressor = zlib.decompressobj(-15)
    assert decompressor.decompress(compressed) == data and decompressor.eof
    assert 1 <= len(compressed) <= len(data)
    return compressed


def chunk_digest(raw):
    """The chunk digest (PROTOCOL.md 11.5): SHA-256 of the chunk's raw bytes."""
    return hashlib.sha256(raw).digest()


def file_digest(content, chunk_size=1_048_576):
    """The file digest (PROTOCOL.md 11.7): SHA-256 over the chunk digests in offset order (of nothing, for an
    empty file)."""
    chunks = [content[start:start + chunk_size] for start in range(0, len(content), chunk_size)]
    return hashlib.sha256(b"".join(chunk_digest(piece) for piece in chunks)).digest()


def chunk():
    data = raw_deflate(CHUNK_RAW)
    header = TRANSFER_ID + struct.pack(">IQIB", 0, 0, len(CHUNK_RAW), CODEC_ZLIB) + chunk_digest(CHUNK_RAW)
    assert len(header) == 65
    return frame(KIND_CHUNK, header + data)


def chunk_ack():
    return frame(KIND_CHUNK_ACK, TRANSFER_ID + struct.pack(">IQB", 0, 0, 0))


def file_end():
    return frame(KIND_FILE_END, TRANSFER_ID + struct.pack(">I", 1) + file_digest(b"hello\n"))


def file_result():
    return frame(KIND_FILE_RESULT, TRANSFER_ID + struct.pack(">IB", 0, 0) + str8("photos/Zo\u00eb.jpg"))


def transfer_cancel():
    return frame(KIND_TRANSFER_CANCEL, TRANSFER_ID + struct.pack(">B", 1) + str8("stopped by the user"))


FIXTURES = [
    ("transfer-offer", offer,
     "offer frame: transfer ID `10 11 ... 1f`, chunk size 1048576, codecs `0x03` (zlib, zstd), 2 files: "
     "`photos/Zo\u00eb.jpg` (123456 bytes, permissions `0o644`, mtime 1767225600.5, `image/jpeg`, 4032 x 3024) "
     "and `notes.txt` (0 bytes, `0o600`, mtime 1767225600.0, no media type, 0 x 0)."),
    ("transfer-offer-reply", offer_reply,
     "offerReply frame: accepted, reason 0, empty detail, codecs `0x01` (zlib), 2 decisions: file 0 accepted "
     "from offset 0, file 1 skipped."),
    ("transfer-chunk", chunk,
     "chunk frame: file 0, offset 0, rawLength 36, codec 1 (zlib), sha256 of the 36 raw bytes "
     "`ferry ferry ferry ferry ferry ferry\\n` (`%s...%s`); data: their raw deflate (RFC 1951), %d bytes."
     % (chunk_digest(CHUNK_RAW).hex()[:8], chunk_digest(CHUNK_RAW).hex()[-8:], len(raw_deflate(CHUNK_RAW)))),
    ("transfer-chunk-ack", chunk_ack, "chunkAck frame: file 0, offset 0, status 0 (stored)."),
    ("transfer-file-end", file_end,
     "fileEnd frame: file 1, the file digest (11.7) of the 6 bytes `hello\\n`: SHA-256 of their one chunk digest "
     "`%s...%s`, which is `%s...%s`."
     % (chunk_digest(b"hello\n").hex()[:8], chunk_digest(b"hello\n").hex()[-8:], file_digest(b"hello\n").hex()[:8],
        file_digest(b"hello\n").hex()[-8:])),
    ("transfer-file-result", file_result,
     "fileResult frame: file 0, status 0 (published), detail `photos/Zo\u00eb.jpg` (the published name)."),
    ("transfer-cancel", transfer_cancel,
     "transferCancel frame: reason 1 (cancelledByUser), detail `stopped by the user`."),
]


def hex_dump(data):
    lines = []
    for start in range(0, len(data), 16):
        row = data[start:start + 16]
        hex_part = " ".join("%02x" % b for b in row)
        text = "".join(chr(b) if 0x20 <= b <= 0x7E else "." for b in row)
        lines.append("%08x: %-47s  %s" % (start, hex_part, text))
    return "\n".join(lines)


def main():
    directory = os.path.dirname(os.path.abspath(__file__))
    for name, build, text in FIXTURES:
        data = build()
        with open(os.path.join(directory, name + ".bin"), "wb") as file:
            file.write(data)
        if "--markdown" in sys.argv:
            print("### `%s.bin` (%d bytes)\n\n%s\n\n```\n%s\n```\n" % (name, len(data), text, hex_dump(data)))


if __name__ == "__main__":
    main()
