#!/usr/bin/env python3
"""Writes the seed files of fuzz/seeds/ that are made rather than written by hand.

Run from anywhere: `python3 fuzz/seeds/make-seeds.py`. It rewrites, byte for byte the
same each time:

- frame_decode/*.bin and template_render/*.bin: inputs of the two targets with a typed
  argument, encoded the way `arbitrary` 1.x reads them back (`Arbitrary::
  arbitrary_take_rest`, as `fuzz_target!` does), so each seed is the input its name
  says. The seeds test (host-cli/tests/fuzz_seeds.rs) fails if one of them no longer
  reads as an input at all; fuzz/README.md says what each one is.
- spirit_archive_listing/: a ZIP and a marketplace `.tgz` of
  manifest-spirit/tests/corpus/seed-example (fixed dates, sorted entries), and the
  ZIP with a bad CRC-32 of the test `a_zip_entry_with_a_bad_checksum_is_an_archive_problem`
  (manifest-spirit/tests/archive.rs), read from that test.
- spirit_package_json/*.bin: the seed-example `package.json` behind an options byte
  (0xF8-0xFF: bit 0 registry-strict, bits 1-2 the host).
- json_spans/depth-*.json: arrays nested 127, 128 and 129 levels deep.

The other seeds are files written by hand, committed as they are.
"""
import gzip
import io
import re
import struct
import tarfile
import zipfile
from pathlib import Path

SEEDS = Path(__file__).resolve().parent
ROOT = SEEDS.parent.parent
SEED_EXAMPLE = ROOT / "manifest-spirit" / "tests" / "corpus" / "seed-example"


def write(relative, data):
    path = SEEDS / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# --- `arbitrary` 1.x, as its `Unstructured` reads values back -------------------------
#
# Integers are little-endian from the front; a bool is a byte whose low bit is set; a
# collection is each element behind a byte with the low bit set, then a byte without it
# (or the end of the data); an enum variant is a u32 `v` with `(v * variants) >> 32` its
# index; a `String` that is not the last field takes its bytes from the front and its
# length from the end of the data: one byte, read modulo the bytes left, while at most
# 256 are left, so these seeds stay under 256 bytes. `Encoder` keeps the bytes from the
# front and the lengths (read from the end, in reverse) apart.


class Encoder:
    def __init__(self):
        self.front = bytearray()
        self.lengths = []

    def u8(self, value):
        self.front.append(value)

    def u16(self, value):
        self.front += struct.pack("<H", value)

    def u32(self, value):
        self.front += struct.pack("<I", value)

    def flag(self, value):
        self.u8(1 if value else 0)

    def bytes_vec(self, data):
        for byte in data:
            self.flag(True)
            self.u8(byte)
        self.flag(False)

    def variant(self, index, count):
        # The smallest v with (v * count) >> 32 == index.
        self.u32(-(-(index << 32) // count))

    def string(self, text):
        data = text.encode()
        self.lengths.append(len(data))
        self.front += data

    def finish(self):
        out = bytes(self.front) + bytes(reversed(self.lengths))
        assert len(out) <= 256 or not self.lengths, "lengths would take two bytes"
        return out


def frame(body):
    return b"%08x" % len(body) + body


def frame_decode(name, max_body, chunks, stream, bodies):
    """fuzz/src/checks/frame_decode.rs: `Input { max, chunks, stream, bodies }`."""
    e = Encoder()
    e.u16(max_body)
    e.bytes_vec(chunks)
    e.bytes_vec(stream)
    for body in bodies:  # the last field: elements until the data ends
        e.flag(True)
        e.bytes_vec(body)
    write(f"frame_decode/{name}.bin", e.finish())


PIECES = ["Dollar", "Open", "Close", "A", "B", "Multibyte", "Text"]


def template_render(name, pieces, pairs, fill):
    """fuzz/src/checks/template_render.rs: `Input { pieces, pairs, fill }`; a piece is a
    variant name or a string (`Text`)."""
    e = Encoder()
    for piece in pieces:
        e.flag(True)
        if piece in PIECES[:-1]:
            e.variant(PIECES.index(piece), len(PIECES))
        else:
            e.variant(PIECES.index("Text"), len(PIECES))
            e.string(piece)
    e.flag(False)
    for key, value in pairs:
        e.flag(True)
        e.string(key)
        e.string(value)
    e.flag(False)
    e.flag(fill is not None)
    if fill is not None:
        e.string(fill)
    write(f"template_render/{name}.bin", e.finish())


def placeholder(key):
    return ["Dollar", "Open", key, "Close"] if key else ["Dollar", "Open", "Close"]


def typed_seeds():
    describe = b'{"jsonrpc":"2.0","id":1,"method":"describe"}'
    reply = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    frame_decode(
        "two-frames",
        max_body=64,
        chunks=[3, 1, 7],
        stream=frame(describe) + frame(b""),
        bodies=[reply, b""],
    )
    frame_decode(
        "over-the-maximum",
        max_body=16,
        chunks=[5],
        stream=frame(b"0123456789abcdef") + frame(b"0123456789abcdefg"),
        bodies=[b"0123456789abcdef", b"0123456789abcdefg"],
    )
    frame_decode(
        "bad-header",
        max_body=1024,
        chunks=[8],
        stream=b"+000002c" + describe,
        bodies=[b"{}"],
    )
    frame_decode(
        "truncated",
        max_body=1024,
        chunks=[2],
        stream=b"0000000A" + b"{\"a\"",
        bodies=[],
    )
    template_render(
        "greeting",
        ["Hello "] + placeholder("name") + [", "] + placeholder("missing")
        + [" $", "Dollar", "Open", "A", "Close", "Multibyte"],
        pairs=[("name", "Curupira"), ("name", "second")],
        fill=None,
    )
    template_render(
        "fill",
        placeholder("a") + placeholder("b") + placeholder("") + placeholder(" a ")
        + [" "] + ["Dollar", "Open", "unclosed"],
        pairs=[],
        fill="v",
    )
    template_render(
        "unicode",
        ["día "] + placeholder("ñ") + [" "] + placeholder("é") + ["Close"],
        pairs=[("ñ", "ok")],
        fill="·",
    )


def archive_seeds():
    files = sorted(p for p in SEED_EXAMPLE.rglob("*") if p.is_file())
    folders = sorted({p.parent for p in files if p.parent != SEED_EXAMPLE})

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        names = [(f.relative_to(SEED_EXAMPLE).as_posix() + "/", None) for f in folders]
        names += [(f.relative_to(SEED_EXAMPLE).as_posix(), f) for f in files]
        for name, path in sorted(names):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            if path is None:
                info.external_attr = (0o40755 << 16) | 0x10
                archive.writestr(info, b"")
            else:
                info.external_attr = 0o100644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    write("spirit_archive_listing/seed-example.zip", buffer.getvalue())

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        entries = [("package", None)]
        entries += [("package/" + f.relative_to(SEED_EXAMPLE).as_posix(), None) for f in folders]
        entries += [("package/" + f.relative_to(SEED_EXAMPLE).as_posix(), f) for f in files]
        for name, path in sorted(entries):
            info = tarfile.TarInfo(name)
            info.mtime = 1767225600  # 2026-01-01
            info.uname = info.gname = ""
            if path is None:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                archive.addfile(info)
            else:
                data = path.read_bytes()
                info.size = len(data)
                info.mode = 0o644
                archive.addfile(info, io.BytesIO(data))
    write(
        "spirit_archive_listing/seed-example.tgz",
        gzip.compress(buffer.getvalue(), mtime=0),
    )

    test = (ROOT / "manifest-spirit" / "tests" / "archive.rs").read_text()
    found = re.search(
        r"fn a_zip_entry_with_a_bad_checksum_is_an_archive_problem\(\) \{\s*"
        r'let hex = "([0-9a-f]+)";',
        test,
    )
    assert found, "the bad-checksum test moved"
    write("spirit_archive_listing/bad-crc.zip", bytes.fromhex(found.group(1)))


def text_seeds():
    package = (SEED_EXAMPLE / "package.json").read_bytes()
    # 0xF8 | bit 0 (registry-strict) | host << 1 (1 cli, 2 desktop).
    write("spirit_package_json/seed-example-strict-cli.bin", bytes([0xF8 | 1 | 1 << 1]) + package)
    write("spirit_package_json/seed-example-desktop.bin", bytes([0xF8 | 2 << 1]) + package)
    for depth in (127, 128, 129):
        write(f"json_spans/depth-{depth}.json", b"[" * depth + b"]" * depth)


if __name__ == "__main__":
    typed_seeds()
    archive_seeds()
    text_seeds()
