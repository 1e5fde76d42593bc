#!/usr/bin/python3
"""Reads a TensorBoard event file without TensorBoard or our generated code, checking everything it can.

Written from the formats' documentation, independently of lib/report:
- TFRecord: each record is uint64 length, uint32 masked CRC-32C of those 8 bytes, the data, uint32 masked CRC-32C
  of the data (little-endian; mask = ((crc >> 15 | crc << 17) + 0xa282ead8) mod 2^32).
- Protocol-buffer wire format: tag = field << 3 | wire type; 0 varint, 1 fixed 64-bit, 2 length-delimited,
  5 fixed 32-bit.
- TensorBoard's Event: wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5;
  Summary: value = 1 (repeated); Summary.Value: tag = 1 (string), simple_value = 2 (float); session_log = 7,
  SessionLog: status = 1 (START = 1).

Usage: read_events.py FILE   prints {"file_version": ..., "events": N, "scalars": {tag: [[step, value], ...]},
"restarts": [step, ...], "sequence": [every event in order]} as JSON and exits 0, or prints what is wrong and exits 1.
       read_events.py --view FOLDER   prints {tag: [[step, value], ...]} as TensorBoard shows the folder's files
read in name order: for files of version brain.Event:2, TensorBoard purges on a SessionLog START at step s every
event at or after s read so far (event_accumulator's _CheckForRestartAndMaybePurge), and nothing else.
"""
import json
import os
import re
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(data):
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise ValueError(f"record at byte {at}: truncated header")
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        if masked(crc32c(data[at:at + 8])) != length_crc:
            raise ValueError(f"record at byte {at}: length CRC mismatch")
        end = at + 12 + length
        if end + 4 > len(data):
            raise ValueError(f"record at byte {at}: truncated data ({length} bytes announced)")
        (data_crc,) = struct.unpack_from("<I", data, end)
        if masked(crc32c(data[at + 12:end])) != data_crc:
            raise ValueError(f"record at byte {at}: data CRC mismatch")
        yield data[at + 12:end]
        at = end + 4


def varint(data, at):
    value, shift = 0, 0
    while True:
        if at >= len(data):
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def fields(data):
    """(field number, wire type, value) of one message; value is int, bytes, or raw fixed-width bytes."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            length, at = varint(data, at)
            value, at = data[at:at + length], at + length
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"unsupported wire type {wire} (field {number})")
        if at > len(data):
            raise ValueError(f"field {number} runs past the end of its message")
        yield number, wire, value


def read(path):
    name = os.path.basename(path)
    if not re.fullmatch(r"events\.out\.tfevents\.\d+\.[^/]+", name):
        raise ValueError(f"file name {name} is not events.out.tfevents.<time>.<host>")
    with open(path, "rb") as file:
        data = file.read()
    result = {"file_version": None, "events": 0, "scalars": {}, "restarts": [], "sequence": []}
    for index, record in enumerate(records(data)):
        event = {"step": 0}
        for number, wire, value in fields(record):
            if number == 1 and wire == 1:
                event["wall_time"] = struct.unpack("<d", value)[0]
            elif number == 2 and wire == 0:
                event["step"] = value - (1 << 64) if value >= 1 << 63 else value
            elif number == 3 and wire == 2:
                event["file_version"] = value.decode()
            elif number == 7 and wire == 2:  # SessionLog: status = 1 (START = 1)
                status = dict((n, v) for n, w, v in fields(value) if w == 0).get(1, 0)
                if status != 1:
                    raise ValueError(f"record {index}: SessionLog status {status}, only START (1) is written")
                event["restart"] = True
            elif number == 5 and wire == 2:
                event.setdefault("values", [])
                for vnumber, vwire, vvalue in fields(value):
                    if vnumber != 1 or vwire != 2:
                        raise ValueError(f"record {index}: Summary field {vnumber} (wire {vwire}) unexpected")
                    tag, scalar = None, None
                    for fnumber, fwire, fvalue in fields(vvalue):
                        if fnumber == 1 and fwire == 2:
                            tag = fvalue.decode()
                        elif fnumber == 2 and fwire == 5:
                            scalar = struct.unpack("<f", fvalue)[0]
                    if tag is None or scalar is None:
                        raise ValueError(f"record {index}: a Summary.Value without tag or simple_value")
                    event["values"].append((tag, scalar))
            else:
                raise ValueError(f"record {index}: Event field {number} (wire {wire}) unexpected")
        if "wall_time" not in event or not 1e9 < event["wall_time"] < 1e11:
            raise ValueError(f"record {index}: no plausible wall_time")
        if index == 0:
            if event.get("file_version") != "brain.Event:2":
                raise ValueError(f"first record: file_version {event.get('file_version')!r}, not 'brain.Event:2'")
            result["file_version"] = event["file_version"]
        elif "values" not in event and "restart" not in event:
            raise ValueError(f"record {index}: an Event without a summary or a restart")
        if "restart" in event:
            result["restarts"].append(event["step"])
        result["sequence"].append({"step": event["step"], "restart": "restart" in event,
                                   "values": event.get("values", [])})
        for tag, scalar in event.get("values", []):
            result["scalars"].setdefault(tag, []).append([event["step"], scalar])
        result["events"] += 1
    if result["events"] == 0:
        raise ValueError("no records")
    return result


def view(folder):
    shown = {}
    for name in sorted(os.listdir(folder)):
        if not name.startswith("events.out.tfevents."):
            continue
        for event in read(os.path.join(folder, name))["sequence"]:
            if event["restart"]:
                shown = {tag: [p for p in points if p[0] < event["step"]] for tag, points in shown.items()}
            for tag, value in event["values"]:
                shown.setdefault(tag, []).append([event["step"], value])
    return shown


if __name__ == "__main__":
    try:
        if sys.argv[1] == "--view":
            print(json.dumps(view(sys.argv[2])))
            sys.exit(0)
        print(json.dumps(read(sys.argv[1])))
    except (OSError, ValueError, UnicodeDecodeError) as error:
        print(f"{sys.argv[1]}: {error}", file=sys.stderr)
        sys.exit(1)
