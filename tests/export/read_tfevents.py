#!/usr/bin/python3
"""An independent reader of TensorBoard event files, written from TensorBoard's field numbers
(event.proto, summary.proto, tensor.proto; graph.proto, node_def.proto, attr_value.proto and
tensor_shape.proto for Event.graph_def) and the TFRecord framing, not from tfdebug's writer.
CRC32C comes from python3-crcmod. Prints one JSON object: the records, decoded, and whether the
file ends in a partial record. Usage: read_tfevents.py FILE"""
import json
import struct
import sys

import crcmod.predefined

crc32c = crcmod.predefined.mkPredefinedCrcFun("crc-32c")


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fields(buf):
    """Yields (field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(buf, i)
            value, i = buf[i:i + n], i + n
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def histogram(buf):
    h = {"bucket_limit": [], "bucket": []}
    names = {1: "min", 2: "max", 3: "num", 4: "sum", 5: "sum_squares"}
    for number, wire, value in fields(buf):
        if number in names:
            h[names[number]] = struct.unpack("<d", value)[0]
        elif number in (6, 7):
            key = "bucket_limit" if number == 6 else "bucket"
            if wire == 2:
                h[key] += list(struct.unpack(f"<{len(value) // 8}d", value))
            else:
                h[key].append(struct.unpack("<d", value)[0])
    return h


def value(buf):
    v = {}
    for number, wire, field in fields(buf):
        if number == 1:
            v["tag"] = field.decode()
        elif number == 2:
            v["simple_value"] = struct.unpack("<f", field)[0]
        elif number == 4:
            image = {}
            for n, _, f in fields(field):
                if n == 4:
                    image["png"] = f.hex()
                else:
                    image[{1: "height", 2: "width", 3: "colorspace"}[n]] = f
            v["image"] = image
        elif number == 5:
            v["histo"] = histogram(field)
        elif number == 8:
            tensor = {"string_val": []}
            for n, _, f in fields(field):
                if n == 1:
                    tensor["dtype"] = f
                elif n == 8:
                    tensor["string_val"].append(f.decode())
            v["tensor"] = tensor
        elif number == 9:
            for n, _, f in fields(field):
                if n == 1:
                    for m, _, g in fields(f):
                        if m == 1:
                            v["plugin_name"] = g.decode()
    return v


def shape(buf):
    """TensorShapeProto (tensor_shape.proto): dim 2 {size 1}, unknown_rank 3; None if unknown."""
    dims = []
    for number, _, field in fields(buf):
        if number == 3 and field:
            return None
        if number == 2:
            size = 0
            for n, _, f in fields(field):
                if n == 1:
                    size = signed64(f)
            dims.append(size)
    return dims


def attr_value(buf):
    """AttrValue (attr_value.proto): list 1 {i 3, f 4, shape 7}, s 2, i 3, f 4, shape 7."""
    for number, wire, field in fields(buf):
        if number == 1:
            out = []
            for n, w, f in fields(field):
                if n == 3:
                    if w == 2:
                        j = 0
                        while j < len(f):
                            v, j = varint(f, j)
                            out.append(signed64(v))
                    else:
                        out.append(signed64(f))
                elif n == 4:
                    out.append(struct.unpack("<f", f)[0])
                elif n == 7:
                    out.append(shape(f))
            return out
        if number == 2:
            return field.decode()
        if number == 3:
            return signed64(field)
        if number == 4:
            return struct.unpack("<f", field)[0]
        if number == 7:
            return shape(field)
    return None


def graph_def(buf):
    """GraphDef (graph.proto): node 1 {name 1, op 2, input 3, attr 5 {key 1, value 2}}, versions 4."""
    g = {"nodes": []}
    for number, _, field in fields(buf):
        if number == 1:
            node = {"input": [], "attr": {}}
            for n, _, f in fields(field):
                if n == 1:
                    node["name"] = f.decode()
                elif n == 2:
                    node["op"] = f.decode()
                elif n == 3:
                    node["input"].append(f.decode())
                elif n == 5:
                    key = val = None
                    for m, _, e in fields(f):
                        if m == 1:
                            key = e.decode()
                        elif m == 2:
                            val = attr_value(e)
                    node["attr"][key] = val
            g["nodes"].append(node)
        elif number == 4:
            g["producer"] = dict((n, f) for n, _, f in fields(field)).get(1, 0)
    return g


def event(buf):
    e = {}
    for number, wire, field in fields(buf):
        if number == 1:
            e["wall_time"] = struct.unpack("<d", field)[0]
        elif number == 2:
            e["step"] = signed64(field)
        elif number == 3:
            e["file_version"] = field.decode()
        elif number == 4:
            e["graph_def"] = graph_def(field)
        elif number == 5:
            e["values"] = [value(f) for n, _, f in fields(field) if n == 1]
        elif number == 10:
            e["writer"] = [f.decode() for n, _, f in fields(field) if n == 1]
    return e


def main(path):
    data = open(path, "rb").read()
    records, i, partial = [], 0, False
    while i < len(data):
        if i + 12 > len(data):
            partial = True
            break
        (length,) = struct.unpack_from("<Q", data, i)
        (length_crc,) = struct.unpack_from("<I", data, i + 8)
        if masked(crc32c(data[i:i + 8])) != length_crc:
            raise SystemExit(f"bad length CRC at offset {i}")
        if i + 12 + length + 4 > len(data):
            partial = True
            break
        payload = data[i + 12:i + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, i + 12 + length)
        if masked(crc32c(payload)) != data_crc:
            raise SystemExit(f"bad data CRC at offset {i}")
        records.append(event(payload))
        i += 12 + length + 4
    print(json.dumps({"records": records, "partial_tail": partial}))


main(sys.argv[1])
