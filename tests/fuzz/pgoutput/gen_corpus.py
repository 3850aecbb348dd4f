#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_pgoutput: one valid pgoutput message per kind (run once; the
files are committed). Layouts: PostgreSQL 15, "Logical Replication Message Formats"."""
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def s(text):
    return text.encode() + b"\0"


def tuple_data(values):
    out = struct.pack(">h", len(values))
    for kind, data in values:
        out += kind
        if kind in (b"t", b"b"):
            out += struct.pack(">i", len(data)) + data
    return out


ROW = [(b"t", b"1"), (b"n", b""), (b"u", b""), (b"t", b"{1,\"a b\",NULL}"),
       (b"t", b"2024-05-01 10:00:00.123+05:30"), (b"t", b'{"a": [1, 2.5]}'),
       (b"b", b"\x00\x01"), (b"t", b"\\x0102")]
KEY = [(b"t", b"1"), (b"n", b""), (b"n", b"")]
LSN = 0x16B374D848
TS = 767872800123456

SEEDS = {
    "begin": b"B" + struct.pack(">QqI", LSN, TS, 4242),
    "commit": b"C" + struct.pack(">BQQq", 0, LSN, LSN + 48, TS),
    "origin": b"O" + struct.pack(">Q", LSN) + s("node_a"),
    "relation": b"R" + struct.pack(">I", 16385) + s("public") + s("todos") + b"d"
                + struct.pack(">h", 3)
                + b"\x01" + s("id") + struct.pack(">Ii", 20, -1)
                + b"\x00" + s("title") + struct.pack(">Ii", 1043, 104)
                + b"\x00" + s("tags") + struct.pack(">Ii", 1009, -1),
    "type": b"Y" + struct.pack(">I", 16400) + s("public") + s("mood"),
    "insert": b"I" + struct.pack(">I", 16385) + b"N" + tuple_data(ROW),
    "update": b"U" + struct.pack(">I", 16385) + b"N" + tuple_data(ROW),
    "update_key": b"U" + struct.pack(">I", 16385) + b"K" + tuple_data(KEY) + b"N" + tuple_data(ROW),
    "update_old": b"U" + struct.pack(">I", 16385) + b"O" + tuple_data(ROW) + b"N" + tuple_data(ROW),
    "delete_key": b"D" + struct.pack(">I", 16385) + b"K" + tuple_data(KEY),
    "delete_old": b"D" + struct.pack(">I", 16385) + b"O" + tuple_data(ROW),
    "truncate": b"T" + struct.pack(">iBII", 2, 3, 16385, 16390),
    "message": b"M" + struct.pack(">BQ", 1, LSN) + s("realtime:broadcast")
               + struct.pack(">i", 17) + b'{"event":"x","p"}',
}

os.makedirs(HERE, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
