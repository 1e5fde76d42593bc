#!/usr/bin/python3
"""check_png.py FILE MIN_BYTES: FILE is a whole PNG (signature, every chunk's CRC-32, IHDR first, IEND last, the
image data inflates to what IHDR says) of at least MIN_BYTES and 400x300 pixels. Exit 1 naming the problem."""
import struct
import sys
import zlib


def check(path, min_bytes):
    data = open(path, "rb").read()
    if len(data) < min_bytes:
        return "%s: %d bytes, expected at least %d (an empty plot?)" % (path, len(data), min_bytes)
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return "%s: no PNG signature" % path
    offset, chunks, idat = 8, [], b""
    while offset < len(data):
        if offset + 12 > len(data) or offset + 12 + struct.unpack(">I", data[offset:offset + 4])[0] > len(data):
            return "%s: truncated chunk at byte %d" % (path, offset)
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        if zlib.crc32(kind + body) != crc:
            return "%s: bad CRC in chunk %s at byte %d" % (path, kind, offset)
        chunks.append((kind, body))
        idat += body if kind == b"IDAT" else b""
        offset += 12 + length
    if chunks[0][0] != b"IHDR" or chunks[-1][0] != b"IEND":
        return "%s: chunks %s do not start with IHDR and end with IEND" % (path, [k for k, _ in chunks])
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    if width < 400 or height < 300:
        return "%s: %dx%d pixels" % (path, width, height)
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    expected = height * (1 + width * channels * depth // 8)
    if len(zlib.decompress(idat)) != expected:
        return "%s: image data does not inflate to %dx%d" % (path, width, height)
    return None


if __name__ == "__main__":
    problem = check(sys.argv[1], int(sys.argv[2]))
    if problem:
        sys.stderr.write(problem + "\n")
        sys.exit(1)
    print("%s: valid PNG" % sys.argv[1])
