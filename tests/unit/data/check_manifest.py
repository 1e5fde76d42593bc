"""Checks a converted data folder's MANIFEST: `pstrain-data 1`, then exactly the named files, each with its size
and zlib CRC-32 as written, then `end`. Used by the pstrain-data CLI tests.

    check_manifest.py FOLDER NAME...
"""
import os
import sys
import zlib

folder, expected = sys.argv[1], sorted(sys.argv[2:])
lines = open(os.path.join(folder, "MANIFEST")).read().split("\n")
assert lines[0] == "pstrain-data 1" and lines[-2:] == ["end", ""], lines
listed = {}
for line in lines[1:-2]:
    crc, size, name = line.split(" ")
    listed[name] = (crc, int(size))
assert sorted(listed) == expected, (sorted(listed), expected)
for name, (crc, size) in listed.items():
    data = open(os.path.join(folder, name), "rb").read()
    assert (crc, size) == ("%08x" % zlib.crc32(data), len(data)), name
