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
KIND_SWARM_MEMBERS = 0x0107
KIND_CHUNK_DIGESTS = 0x0108
KIND_SWARM_HAVE = 0x0109
KIND_SWARM_REQUEST = 0x010A
KIND_SWARM_REFUSE = 0x010B
KIND_SWARM_REPORT = 0x010C

SWARM_ID = bytes(range(0x20, 0x30))
NO_SEED = 0xFFFF

CODEC_ZLIB = 1
CODEC_ZSTD_PREFIXED = 3
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


def offer_payload():
    files = [
        offer_entry("photos/Zo\u00eb.jpg", 123456, 0o644, 1767225600, 500_000_000, "image/jpeg", 4032, 3024),
        offer_entry("notes.txt", 0, 0o600, 1767225600, 0, "", 0, 0),
    ]
    return TRANSFER_ID + struct.pack(">IBI", 1_048_576, CODECS_ZLIB_ZSTD, len(files)) + b"".join(files)


def offer():
    return frame(KIND_OFFER, offer_payload())


# The swarm of the swarm vectors: three recipients (device IDs 00..1f, 20..3f, 40..5f).
SWARM_MEMBERS = [
    (bytes(range(0x00, 0x20)), "10.0.0.1:41971"),
    (bytes(range(0x20, 0x40)), "[fe80::2%eth0]:41971"),
    (bytes(range(0x40, 0x60)), ""),
]


def swarm_section(members):
    """PROTOCOL.md 11.11: memberCount u16 (2..256), swarmID, members (deviceID, address str8 0..64 printable)."""
    assert 2 <= len(members) <= 256
    assert len({device for device, _ in members}) == len(members)
    out = struct.pack(">H", len(members)) + SWARM_ID
    for device, address in members:
        assert len(device) == 32 and all(0x21 <= b <= 0x7E for b in address.encode("ascii"))
        out += device + str8(address, 64)
    return out


def offer_swarm():
    return frame(KIND_OFFER, offer_payload() + swarm_section(SWARM_MEMBERS))


def offer_digests():
    """The digests section (11.3) after an empty swarm section: file 0's digest, here that of `hello\n`."""
    section = struct.pack(">I", 1) + struct.pack(">I", 0) + file_digest(b"hello\n")
    return frame(KIND_OFFER, offer_payload() + struct.pack(">H", 0) + section)


OFFER_FOLDERS = ["photos/empty", "photos/2026/Zo\u00eb"]


def offer_folders():
    """The folders section (11.3) after an empty swarm section and an empty digests section: flags 0x01 (replaces)
    and two folders."""
    section = struct.pack(">BI", 0x01, len(OFFER_FOLDERS)) + b"".join(str16(path) for path in OFFER_FOLDERS)
    return frame(KIND_OFFER, offer_payload() + struct.pack(">HI", 0, 0) + section)


def offer_reply_payload():
    decisions = [(1, 0), (0, 0)]  # take the photo from its start, skip the notes
    payload = TRANSFER_ID + struct.pack(">BB", 1, 0) + str8("") + struct.pack(">BI", CODECS_ZLIB, len(decisions))
    return payload + b"".join(struct.pack(">BQ", accepted, offset) for accepted, offset in decisions)


def offer_reply():
    return frame(KIND_OFFER_REPLY, offer_reply_payload())


def offer_reply_relay():
    return frame(KIND_OFFER_REPLY, offer_reply_payload() + struct.pack(">B", 0x01))  # flags: bit 0 relay


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


# zstd (RFC 8878), written by hand for the zstdPrefixed chunk: one compressed block of no literals and one
# sequence, a match that reaches back into the prefix (the file's previous chunk), coded with the predefined FSE
# distributions of RFC 8878 section 3.1.1.3.2.2.
ZSTD_MAGIC = 0xFD2FB528
LL_DEFAULT = (6, [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
                  -1, -1, -1, -1])
ML_DEFAULT = (6, [1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1])
OF_DEFAULT = (5, [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1])


def fse_symbols(distribution):
    """The symbol of each state of an FSE decoding table (RFC 8878 4.1.1)."""
    log, probabilities = distribution
    size = 1 << log
    table = [None] * size
    high = size - 1
    for symbol, probability in enumerate(probabilities):
        if probability == -1:
            table[high] = symbol
            high -= 1
    position, step = 0, (size >> 1) + (size >> 3) + 3
    for symbol, probability in enumerate(probabilities):
        for _ in range(max(probability, 0)):
            table[position] = symbol
            position = (position + step) & (size - 1)
            while position > high:
                position = (position + step) & (size - 1)
    return table


def zstd_one_match(distance, length, content_size):
    """A zstd frame of `content_size` bytes (= length): one match `distance` bytes back, into the prefix."""
    assert length == content_size and 35 <= length <= 36 and 32 <= distance + 3 < 64
    ll_code, ll_extra = 0, (0, 0)                 # no literals
    ml_code, ml_extra = 32, (1, length - 35)      # match length 35 + 1 extra bit
    of_code, of_extra = 5, (5, distance + 3 - 32)  # offset value = distance + 3 = 2^5 + 5 extra bits
    states = [(fse_symbols(table).index(code), table[0]) for code, table in
              ((ll_code, LL_DEFAULT), (of_code, OF_DEFAULT), (ml_code, ML_DEFAULT))]
    # Read backwards from the last byte's highest set bit: the three initial states (literal lengths, offsets,
    # match lengths), then the extra bits of the offset, the match length and the literal length.
    fields = states + [of_extra[::-1], ml_extra[::-1], ll_extra[::-1]]
    value, bits = 1, 0  # the end marker
    for field, width in fields:
        value = (value << width) | field
        bits += width
    stream = value.to_bytes((bits + 8) // 8, "little")
    block = bytes([0x00, 0x01, 0x00]) + stream  # raw literals of size 0; 1 sequence; predefined tables
    header = 1 | (2 << 1) | (len(block) << 3)  # last block, compressed
    frame_header = bytes([0x80, 0x00]) + struct.pack("<I", content_size)  # 4-byte content size; window 1 KiB
    return struct.pack("<I", ZSTD_MAGIC) + frame_header + struct.pack("<I", header)[:3] + block


# The zstdPrefixed chunk: a file of 65 572 bytes, the 36-byte line repeated; chunk size 65 536. Its second chunk
# (offset 65 536, 36 bytes) is the 36 bytes before it again: one match 36 bytes back, into the prefix (the file's
# first chunk).
PREFIXED_FILE = (CHUNK_RAW * (65_572 // len(CHUNK_RAW) + 1))[:65_572]
PREFIXED_CHUNK_SIZE = 65_536


def chunk_prefixed():
    raw = PREFIXED_FILE[PREFIXED_CHUNK_SIZE:]
    data = zstd_one_match(36, len(raw), len(raw))
    assert raw == PREFIXED_FILE[PREFIXED_CHUNK_SIZE - 36:PREFIXED_CHUNK_SIZE]
    header = TRANSFER_ID + struct.pack(">IQIB", 0, PREFIXED_CHUNK_SIZE, len(raw), CODEC_ZSTD_PREFIXED)
    header += chunk_digest(raw)
    return frame(KIND_CHUNK, header + data)


def chunk_ack():
    return frame(KIND_CHUNK_ACK, TRANSFER_ID + struct.pack(">IQB", 0, 0, 0))


def chunk_ack_from_peer():
    return frame(KIND_CHUNK_ACK, TRANSFER_ID + struct.pack(">IQB", 0, 3 * 1_048_576, 2))


def swarm_members():
    members = [0, 2]
    return frame(KIND_SWARM_MEMBERS, TRANSFER_ID + struct.pack(">H", len(members))
                 + b"".join(struct.pack(">H", index) for index in members))


def chunk_digests():
    entries = [(2, chunk_digest(CHUNK_RAW)), (NO_SEED, chunk_digest(b"hello\n"))]
    payload = TRANSFER_ID + struct.pack(">IIH", 0, 4, len(entries))
    payload += b"".join(struct.pack(">H", seed) + digest for seed, digest in entries)
    return frame(KIND_CHUNK_DIGESTS, payload)


def swarm_have():
    ranges = [(0, 4), (6, 1)]
    payload = SWARM_ID + struct.pack(">IH", 0, len(ranges))
    payload += b"".join(struct.pack(">II", first, length) for first, length in ranges)
    return frame(KIND_SWARM_HAVE, payload)


def swarm_request():
    return frame(KIND_SWARM_REQUEST, SWARM_ID + struct.pack(">IIB", 0, 6, CODECS_ZLIB))


def swarm_refuse():
    return frame(KIND_SWARM_REFUSE, SWARM_ID + struct.pack(">IIB", 0, 6, 3))


def swarm_report():
    return frame(KIND_SWARM_REPORT, TRANSFER_ID + struct.pack(">HBII", 2, 1, 0, 6))


def file_end():
    return frame(KIND_FILE_END, TRANSFER_ID + struct.pack(">I", 1) + file_digest(b"hello\n"))


def file_result():
    return frame(KIND_FILE_RESULT, TRANSFER_ID + struct.pack(">IB", 0, 0) + str8("photos/Zo\u00eb.jpg"))


# What a later minor version appends (PROTOCOL.md 8): after the last field, optional parts written empty first.
APPENDED = b"ext!"


def offer_extended():
    return frame(KIND_OFFER, offer_payload() + struct.pack(">H", 0) + APPENDED)  # empty swarm section, then fields


def offer_reply_extended():
    return frame(KIND_OFFER_REPLY, offer_reply_payload() + struct.pack(">B", 0) + APPENDED)  # flags 0, then fields


def file_result_extended():
    payload = TRANSFER_ID + struct.pack(">IB", 0, 0) + str8("photos/Zo\u00eb.jpg")
    return frame(KIND_FILE_RESULT, payload + struct.pack(">B", 0) + APPENDED)  # flags 0, then fields


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
    ("transfer-chunk-prefixed", chunk_prefixed,
     "chunk frame: file 0, offset 65536, rawLength 36, codec 3 (zstdPrefixed), sha256 of the 36 raw bytes "
     "`%s` (`%s...%s`): the second chunk, at chunk size 65536, of a file of 65572 bytes that is the line "
     "`ferry ferry ferry ferry ferry ferry\\n` repeated; its prefix is the file's first chunk (65536 bytes). Data: "
     "a zstd frame of %d bytes (content size 36, window 1 KiB) with one compressed block: no literals, one sequence "
     "(literal length 0, match length 36, offset 36: the last 36 bytes of the prefix), predefined FSE tables."
     % (PREFIXED_FILE[PREFIXED_CHUNK_SIZE:].decode().replace("\n", "\\n"),
        chunk_digest(PREFIXED_FILE[PREFIXED_CHUNK_SIZE:]).hex()[:8],
        chunk_digest(PREFIXED_FILE[PREFIXED_CHUNK_SIZE:]).hex()[-8:],
        len(zstd_one_match(36, 36, 36)))),
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
    ("transfer-offer-swarm", offer_swarm,
     "offer frame: the offer of `transfer-offer.bin` followed by a swarm section (11.11): 3 members, swarm ID "
     "`20 21 ... 2f`; member 0 device ID `00 01 ... 1f` at `10.0.0.1:41971`, member 1 `20 21 ... 3f` at "
     "`[fe80::2%eth0]:41971`, member 2 `40 41 ... 5f` with no address."),
    ("transfer-offer-digests", offer_digests,
     "offer frame: the offer of `transfer-offer.bin`, an empty swarm section (`00 00`) and a digests section "
     "(11.3): 1 digest, file 0, `%s...%s` (the file digest of `hello\\n`, a sample value). A decoder of before the "
     "section decodes it to the offer of `transfer-offer.bin`."
     % (file_digest(b"hello\n").hex()[:8], file_digest(b"hello\n").hex()[-8:])),
    ("transfer-offer-folders", offer_folders,
     "offer frame: the offer of `transfer-offer.bin`, an empty swarm section (`00 00`), an empty digests section "
     "(`00 00 00 00`) and a folders section (11.3): flags `0x01` (replaces), 2 folders `photos/empty` and "
     "`photos/2026/Zo\u00eb`. A decoder of before the section decodes it to the offer of `transfer-offer.bin`."),
    ("transfer-offer-reply-relay", offer_reply_relay,
     "offerReply frame: the reply of `transfer-offer-reply.bin` followed by the flags byte `0x01` (relay)."),
    ("transfer-chunk-ack-peer", chunk_ack_from_peer,
     "chunkAck frame: file 0, offset 3145728 (chunk 3 at 1 MiB), status 2 (storedFromPeer)."),
    ("transfer-swarm-members", swarm_members, "swarmMembers frame: members 0 and 2."),
    ("transfer-chunk-digests", chunk_digests,
     "chunkDigests frame: file 0, chunks 4 and 5: chunk 4 seeded by member 2, digest `%s...%s` (the chunk of "
     "`transfer-chunk.bin`); chunk 5 with no seed (`0xffff`), digest `%s...%s` (of `hello\\n`)."
     % (chunk_digest(CHUNK_RAW).hex()[:8], chunk_digest(CHUNK_RAW).hex()[-8:], chunk_digest(b"hello\n").hex()[:8],
        chunk_digest(b"hello\n").hex()[-8:])),
    ("transfer-swarm-have", swarm_have,
     "swarmHave frame: swarm ID `20 21 ... 2f`, file 0, chunks 0-3 (range 0, 4) and 6 (range 6, 1)."),
    ("transfer-swarm-request", swarm_request,
     "swarmRequest frame: swarm ID `20 21 ... 2f`, file 0, chunk 6, codecs `0x01` (zlib)."),
    ("transfer-swarm-refuse", swarm_refuse,
     "swarmRefuse frame: swarm ID `20 21 ... 2f`, file 0, chunk 6, reason 3 (busy)."),
    ("transfer-swarm-report", swarm_report,
     "swarmReport frame: offender member 2, reason 1 (badChunk), file 0, chunk 6."),
    ("transfer-offer-extended", offer_extended,
     "offer frame from a later minor version (decode-only): the offer of `transfer-offer.bin`, an empty swarm "
     "section (`memberCount` `00 00`) and 4 appended bytes `ext!` (65 78 74 21). Decodes to the offer of "
     "`transfer-offer.bin`: a 1.0 decoder skips what follows the swarm section (section 8)."),
    ("transfer-offer-reply-extended", offer_reply_extended,
     "offerReply frame from a later minor version (decode-only): the reply of `transfer-offer-reply.bin`, the flags "
     "byte `00` and 4 appended bytes `ext!`. Decodes to the reply of `transfer-offer-reply.bin`."),
    ("transfer-file-result-extended", file_result_extended,
     "fileResult frame from a later minor version (decode-only): the result of `transfer-file-result.bin`, the "
     "flags byte `00` and 4 appended bytes `ext!`. Decodes to the result of `transfer-file-result.bin`."),
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
