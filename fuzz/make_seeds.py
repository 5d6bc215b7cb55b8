#!/usr/bin/env python3
"""Writes the structure-aware seeds of the libFuzzer targets, and their dictionaries.

Usage: /usr/bin/python3 fuzz/make_seeds.py [RUN_DIR]

Each seed is a small file (under 64 KB, the longest input scripts/fuzz.sh lets libFuzzer make)
shaped like the inputs that hurt the readers in issue 17, so that mutation starts next to them:
deep JSON, headers of thousands of tensors, empty tensors with dimensions of 2^62, duplicate and
hostile names, zero and self-overlapping strides, deep pickle MARKs, memo tricks, ONNX nodes with
long names and many attributes. They go to fuzz/corpus/<target>/seed-*; the dictionaries (JSON
and pickle tokens) to fuzz/<target>.dict, which scripts/fuzz.sh passes with -dict= when present.
RUN_DIR (a run directory, e.g. one written by tests/export/write_run) adds its report.json and
metrics.jsonl to the seeds of run_report_fuzz and metrics_jsonl_fuzz; without it, those get only
the files written here by hand. Writing again replaces the seeds with the same bytes.
"""
import io
import json
import os
import pickle
import struct
import sys
import warnings
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_SEED = 64 * 1024
HUGE = 2 ** 62


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) <= MAX_SEED, f"{target}/{name}: {len(data)} bytes"
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "seed-" + name), "wb") as f:
        f.write(data)


# --- safetensors: 8-byte little-endian header length, JSON header, data.
def safetensors(header, data=b""):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def st_seeds():
    t = "safetensors_fuzz"
    one = b'"dtype":"F32","shape":[1],"data_offsets":[0,4]'
    deep = 300
    write(t, "deep_shape", safetensors(b'{"t":{"dtype":"F32","shape":' + b"[" * deep + b"]" * deep +
                                       b',"data_offsets":[0,4]}}', b"\0" * 4))
    write(t, "deep_unknown_field", safetensors(b'{"t":{' + one + b',"x":' + b'{"a":' * deep + b"1" + b"}" * deep +
                                               b"}}", b"\0" * 4))
    write(t, "deep_metadata", safetensors(b'{"__metadata__":{"k":' + b"[" * deep + b"]" * deep + b"},"
                                          b'"t":{' + one + b"}}", b"\0" * 4))
    # Just inside and just past a bound of a few hundred, as a mutation would cross it.
    for depth in (63, 64, 65, 128, 129):
        write(t, f"deep_array_{depth}", safetensors(b'{"t":{' + one + b',"x":' + b"[" * depth + b"]" * depth +
                                                    b"}}", b"\0" * 4))
    many = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(1100)}
    write(t, "many_empty_tensors", safetensors(json.dumps(many, separators=(",", ":")).encode()))
    many = {f"t{i}": {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]} for i in range(900)}
    write(t, "many_tensors", safetensors(json.dumps(many, separators=(",", ":")).encode(), bytes(range(256)) * 4))
    write(t, "huge_empty", safetensors({"t": {"dtype": "F32", "shape": [HUGE, 0], "data_offsets": [0, 0]},
                                        "u": {"dtype": "F32", "shape": [0, HUGE], "data_offsets": [0, 0]},
                                        "v": {"dtype": "BF16", "shape": [2 ** 30, 2 ** 30, 0],
                                              "data_offsets": [0, 0]}}))
    write(t, "huge_dims_overflow", safetensors({"t": {"dtype": "F32", "shape": [2 ** 32, 2 ** 32],
                                                      "data_offsets": [0, 4]}}, b"\0" * 4))
    write(t, "negative_dims", safetensors(b'{"t":{"dtype":"F32","shape":[-1,-4],"data_offsets":[0,4]}}', b"\0" * 4))
    write(t, "float_dims", safetensors(b'{"t":{"dtype":"F32","shape":[1.0e0,1e300],"data_offsets":[0,4]}}',
                                       b"\0" * 4))
    write(t, "duplicate_keys", safetensors(b'{"t":{' + one + b'},"t":{"dtype":"F16","shape":[2],'
                                           b'"data_offsets":[0,4]},"u":{' + one + b',"dtype":"I8"}}', b"\0" * 4))
    write(t, "duplicate_metadata", safetensors(b'{"__metadata__":{"a":"1","a":"2"},"__metadata__":{"b":"3"},'
                                               b'"t":{' + one + b"}}", b"\0" * 4))
    write(t, "long_names", safetensors({"n" * 16000: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                        "m" * 16000: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                        "__metadata__": {"k" * 8000: "v" * 8000}}, b"\0" * 4))
    write(t, "control_names", safetensors(
        {"\x1b[31mred\x1b[0m": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
         "line\nbreak\r\t\x00nul": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
         "\u202e\ufeff\U0001f600": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
         "__metadata__": {"\x1b]0;title\x07": "\x1b[2J"}}, b"\0" * 4))
    write(t, "invalid_utf8_names", safetensors(b'{"\xff\xfe":{' + one + b'},"\xc0\xaf":{' + one + b'},'
                                               b'"\xed\xa0\x80":{' + one + b'},"ok\xe2\x82":{' + one + b"}}",
                                               b"\0" * 4))
    write(t, "escaped_names", safetensors(b'{"\\ud800":{' + one + b'},"\\u0000\\u001b[1m":{' + one + b'},'
                                          b'"\\udbff\\udfff":{' + one + b"}}", b"\0" * 4))
    write(t, "unknown_fields", safetensors(b'{"t":{' + one + b',"extra":{"a":[1,{"b":null}],"c":"d"},'
                                           b'"more":[[],{},true,false,null,-0.0,1e-400]},'
                                           b'"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],'
                                           b'"data_offsets_2":{"k":[0,4]}}}', b"\0" * 4))
    for name, meta in (("metadata_empty", b"{}"), ("metadata_null", b"null"), ("metadata_array", b'["a","b"]'),
                       ("metadata_numbers", b'{"a":1,"b":2.5,"c":true,"d":null}'),
                       ("metadata_nested", b'{"a":{"b":{"c":"d"}},"e":["f"]}'),
                       ("metadata_string", b'"format"'), ("metadata_pt", b'{"format":"pt"}')):
        write(t, name, safetensors(b'{"__metadata__":' + meta + b',"t":{' + one + b"}}", b"\0" * 4))
    write(t, "metadata_only", safetensors(b'{"__metadata__":{"format":"pt"}}'))
    dtypes = ["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL",
              "F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F4", "C64", "E8"]
    header, offset = {}, 0
    for d in dtypes:
        header[d.lower()] = {"dtype": d, "shape": [2, 2], "data_offsets": [offset, offset + 16]}
        offset += 16
    write(t, "all_dtypes", safetensors(header, bytes(i % 256 for i in range(offset))))
    write(t, "overlapping_offsets", safetensors({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},
                                                 "c": {"dtype": "F32", "shape": [1], "data_offsets": [16, 12]}},
                                                b"\0" * 16))
    write(t, "offsets_past_end", safetensors({"t": {"dtype": "F32", "shape": [1],
                                                    "data_offsets": [2 ** 64 - 4, 2 ** 64]}}, b"\0" * 4))
    write(t, "header_length_huge", struct.pack("<Q", 2 ** 63) + b'{"t":{' + one + b"}}")
    write(t, "header_padded", safetensors(b'{"t":{' + one + b"}}" + b" " * 5, b"\0" * 4))
    write(t, "header_not_object", safetensors(b'[{"t":1}]'))


# --- npy / npz.
def npy(descr, shape, fortran=False, data=b"", version=(1, 0), raw_header=None):
    if raw_header is None:
        raw_header = ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }" %
                      (descr if descr.startswith("[") else repr(descr), fortran,
                       "(" + "".join(f"{d}, " for d in shape) + ")" if len(shape) != 1 else f"({shape[0]},)")).encode()
    size_field = "<H" if version[0] == 1 else "<I"
    prefix = 8 + struct.calcsize(size_field)
    raw_header += b" " * ((64 - (prefix + len(raw_header) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack(size_field, len(raw_header)) + raw_header + data


def npy_of(array):
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def npy_seeds():
    t = "npy_fuzz"
    write(t, "huge_empty", npy("<f4", (HUGE, 0)))
    write(t, "huge_empty_3d", npy("<f2", (0, HUGE, HUGE)))
    write(t, "huge_overflow", npy("<f4", (2 ** 32, 2 ** 32), data=b"\0" * 16))
    write(t, "object_array", npy_of(np.array([1, "two", None, [3]], dtype=object)))
    write(t, "structured", npy("[('a', '<f4'), ('b', '<i8', (2,))]", (2,), data=b"\0" * 40))
    write(t, "scalar", npy("<f8", (), data=struct.pack("<d", 1.5)))
    write(t, "version2", npy("<i4", (2, 2), data=struct.pack("<4i", 1, 2, 3, 4), version=(2, 0)))
    write(t, "version3_unicode", npy("<U2", (2,), data="ab\u00e9\U0001f600".encode("utf-32-le"), version=(3, 0)))
    write(t, "fortran_be", npy_of(np.asfortranarray(np.arange(12, dtype=">f8").reshape(3, 4))))
    for d in ("|b1", "|u1", "|i1", "<u2", "<i2", "<u4", "<u8", "<i8", ">f4", "<c8", "<M8[s]", "|V4", "<e"):
        write(t, "dtype_" + d.replace("<", "le_").replace(">", "be_").replace("|", "na_").replace("[", "_")
              .replace("]", ""), npy(d, (2,), data=bytes(range(32))))
    write(t, "header_long", npy("<f4", (1,), data=b"\0" * 4, raw_header=b"{'descr': '<f4', 'fortran_order': False, "
                                b"'shape': (1,), " + b"'x': " + b"(" * 200 + b")" * 200 + b", }"))
    write(t, "header_bad_literals", npy("<f4", (1,), data=b"\0" * 4,
                                        raw_header=b"{'descr': '<f4', 'fortran_order': 0, 'shape': (1.0, -1), }"))


def member(name, method=zipfile.ZIP_STORED):
    # A fixed date: writing again gives the same bytes.
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = method
    return info


def npz(members, method=zipfile.ZIP_DEFLATED, zip64=False):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members:
            with z.open(member(name, method), "w", force_zip64=zip64) as f:
                f.write(data)
    return buf.getvalue()


def npz_seeds():
    t = "npz_fuzz"
    a = npy_of(np.arange(16, dtype=np.float32).reshape(4, 4))
    write(t, "deflated_members", npz([("a.npy", a), ("b/c.npy", npy_of(np.ones(100, dtype=np.int16))),
                                      ("d.npy", npy_of(np.zeros(4000, dtype=np.float64)))]))
    write(t, "huge_empty_members", npz([("e.npy", npy("<f4", (HUGE, 0))), ("f.npy", npy("<f8", (0, HUGE)))],
                                       zipfile.ZIP_STORED))
    write(t, "object_member", npz([("o.npy", npy_of(np.array([{"a": 1}, None], dtype=object))), ("a.npy", a)]))
    write(t, "zip64", npz([("a.npy", a)], zipfile.ZIP_DEFLATED, zip64=True))
    write(t, "not_npy_member", npz([("readme.txt", b"hello"), ("a.npy", a), ("b.npy", b"\x93NUMPY")]))
    write(t, "duplicate_members", npz([("a.npy", a), ("a.npy", npy_of(np.ones(3, dtype=np.uint8)))],
                                      zipfile.ZIP_STORED))
    write(t, "names_control_utf8", npz([("\x1b[31m.npy", a), ("\u00e9\U0001f600.npy", a)]))
    write(t, "bzip2_member", npz([("a.npy", a)], zipfile.ZIP_BZIP2))


# --- pickles, written opcode by opcode where the pickle module would not write them.
def p_int(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if -2 ** 31 <= v < 2 ** 31:
        return b"J" + struct.pack("<i", v)
    raw = v.to_bytes(9, "little", signed=True).rstrip(b"\0") or b"\0"
    if raw[-1] & 0x80 and v > 0:
        raw += b"\0"
    return b"\x8a" + bytes([len(raw)]) + raw


def p_str(s):
    b = s.encode("utf-8", "surrogatepass") if isinstance(s, str) else s
    return b"X" + struct.pack("<I", len(b)) + b


def p_tuple(items):
    return b"(" + b"".join(items) + b"t"


def torch_storage(key, numel, kind="FloatStorage"):
    return b"(" + p_str("storage") + b"ctorch\n" + kind.encode() + b"\n" + p_str(key) + p_str("cpu") + p_int(
        numel) + b"tQ"


def torch_tensor(storage, sizes, strides, offset=0):
    return (b"ctorch._utils\n_rebuild_tensor_v2\n" +
            p_tuple([storage, p_int(offset), p_tuple([p_int(s) for s in sizes]),
                     p_tuple([p_int(s) for s in strides]), b"\x89", b"ccollections\nOrderedDict\n)R"]) + b"R")


def state_dict(entries):
    return b"\x80\x02ccollections\nOrderedDict\n)R(" + b"".join(p_str(k) + v for k, v in entries) + b"u."


def torch_zip(pkl, storages, method=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr(member("archive/data.pkl", method), pkl)
        for key, data in storages.items():
            z.writestr(member(f"archive/data/{key}"), data)
        z.writestr(member("archive/version", method), b"3\n")
    return buf.getvalue()


def deep_mark(depth):
    return b"\x80\x02" + b"(" * depth + b"N" + b"t" * depth + b"."


def deep_lists(depth):
    return b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."


def memo_tricks():
    # A value memoised, fetched many times, re-memoised under another index, a list that holds
    # itself, and a memo index far past the ones used (LONG_BINPUT 2^32-1).
    return (b"\x80\x02]q\x00(h\x00h\x00h\x00" + b"r\xff\xff\xff\xff" + b"j\xff\xff\xff\xff" +
            b"q\x01h\x01h\x00e" + b"}q\x02(" + p_str("self") + b"h\x02" + p_str("list") + b"h\x00u" +
            b"\x86" + b".")


def pickle_values():
    # Python's own pickles of plain values at every protocol (FRAME, MEMOIZE, SHORT_BINUNICODE...).
    value = {"a": [1, 2.5, -3, 2 ** 70, None, True, "\u00e9\U0001f600", b"\x00\xff"],
             "b": (1, (2, (3,))), "c": {1: {2: [3, 4]}}, "d": bytearray(b"xy")}
    return [(f"values_p{p}", pickle.dumps(value, protocol=p)) for p in range(0, 6)]


def pickle_seeds():
    seeds = pickle_values()
    seeds += [("deep_mark_500", deep_mark(500)), ("deep_mark_5000", deep_mark(5000)),
              ("deep_lists_400", deep_lists(400)), ("memo_tricks", memo_tricks()),
              ("many_values", b"\x80\x02](" + b"N" * 60000 + b"e."),
              ("many_ints", b"\x80\x02](" + b"".join(p_int(i * 7919) for i in range(4000)) + b"e."),
              ("many_marks_unclosed", b"\x80\x02" + b"(" * 20000 + b"."),
              ("shared_refs", b"\x80\x02]q\x00" + b"(h\x00h\x00e" * 20 + b"."),
              ("global_chain", b"\x80\x02cbuiltins\ngetattr\n" + p_tuple([b"cos\nsystem\n", p_str("x")]) + b"R."),
              ("stack_global", b"\x80\x04\x95\x11\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94."),
              ("long_strings", b"\x80\x02" + p_str("s" * 30000) + b"C\x03abc" + b"\x86."),
              ("utf8_invalid", b"\x80\x02" + p_str(b"\xff\xfe\xed\xa0\x80") + b"."),
              ("state_dict_huge_empty", state_dict([("t", torch_tensor(torch_storage("0", 0), [HUGE, 0], [0, 1]))])),
              ("state_dict_zero_strides", state_dict([("t", torch_tensor(torch_storage("0", 1), [2 ** 20] * 2,
                                                                         [0, 0]))]))]
    for target in ("pickle_fuzz", "pickle_scan_fuzz"):
        for name, data in seeds:
            write(target, name, data)
    # The scanner looks for calls a pickle could make: nested pickles, protocol 0 globals.
    write("pickle_scan_fuzz", "nested_bytes_pickle",
          b"\x80\x02cpickle\nloads\n" + p_tuple([b"C" + bytes([len(deep_mark(40))]) + deep_mark(40)]) + b"R.")
    write("pickle_scan_fuzz", "protocol0_globals", b"cos\nsystem\n(S'id'\ntR(iposix\nsystem\nS'ls'\no.")
    write("pickle_scan_fuzz", "frames_truncated", b"\x80\x04\x95\xff\xff\x00\x00\x00\x00\x00\x00\x8c\x02os")


def pytorch_seeds():
    t = "pytorch_fuzz"
    f4 = struct.pack("<4f", 1, -2, 0, 3)
    write(t, "zero_strides", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 1), [2 ** 20] * 2,
                                                                      [0, 0]))]), {"0": f4[:4]}))
    write(t, "zero_stride_rows", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 4), [2 ** 36, 4],
                                                                          [0, 1]))]), {"0": f4}))
    write(t, "self_overlapping", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 4), [3, 3], [1, 1])),
                                                       ("u", torch_tensor(torch_storage("0", 4), [2, 2, 2],
                                                                          [1, 1, 1]))]), {"0": f4}))
    write(t, "negative_strides", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 4), [2, 2],
                                                                          [-1, 2], 3))]), {"0": f4}))
    write(t, "huge_empty", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 0), [HUGE, 0], [0, 1])),
                                                 ("u", torch_tensor(torch_storage("0", 0), [0, HUGE, HUGE],
                                                                    [HUGE, 1, 1]))]), {"0": b""}))
    write(t, "huge_offset", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 4), [1], [1],
                                                                     2 ** 62))]), {"0": f4}))
    write(t, "many_values", torch_zip(b"\x80\x02](" + b"N" * 60000 + b"e.", {}, zipfile.ZIP_DEFLATED))
    write(t, "deep_mark", torch_zip(deep_mark(3000), {}))
    write(t, "memo_tricks", torch_zip(memo_tricks(), {}))
    # One storage memoised and shared by many views (a tied weight), fetched with BINGET.
    shared = (b"\x80\x02ccollections\nOrderedDict\n)R(" + p_str("a") +
              torch_tensor(torch_storage("0", 4) + b"q\x10", [4], [1]) +
              b"".join(p_str(f"v{i}") + torch_tensor(b"h\x10", [2], [1], i % 3) for i in range(200)) + b"u.")
    write(t, "memo_shared_storage", torch_zip(shared, {"0": f4}))
    write(t, "storage_kinds", torch_zip(state_dict([(k, torch_tensor(torch_storage(str(i), 2, k), [2], [1]))
                                                    for i, k in enumerate(["HalfStorage", "BFloat16Storage",
                                                                           "DoubleStorage", "LongStorage",
                                                                           "BoolStorage", "ByteStorage",
                                                                           "Float8_e4m3fnStorage",
                                                                           "ComplexFloatStorage"])]),
                                        {str(i): b"\x01" * 16 for i in range(8)}))
    write(t, "missing_storage", torch_zip(state_dict([("t", torch_tensor(torch_storage("9", 4), [4], [1]))]), {}))
    write(t, "storage_short", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 1000), [1000], [1]))]),
                                        {"0": f4}))
    write(t, "deflated_pickle", torch_zip(state_dict([("t", torch_tensor(torch_storage("0", 4), [4], [1]))]),
                                          {"0": f4}, zipfile.ZIP_DEFLATED))
    try:
        import torch
    except ImportError:
        return
    buf = io.BytesIO()
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    torch.save({"t": base.t(), "view": base[1:, ::2], "expand": torch.ones(1, 3).expand(5, 3),
                "bf16": base.to(torch.bfloat16), "i8": base.to(torch.int8), "bool": base > 3,
                "empty": torch.empty(0, 7), "scalar": torch.tensor(2.5)}, buf)
    write(t, "torch_views", buf.getvalue())


# --- ONNX, through python3-onnx.
def onnx_seeds():
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        return
    t = "onnx_fuzz"

    def model(graph, **kw):
        return helper.make_model(graph, **kw).SerializeToString()

    nodes = []
    for i in range(12):
        attrs = {f"i_{k}_" + "a" * 20: k for k in range(6)}
        attrs.update({f"f{k}": 0.5 * k for k in range(3)})
        attrs["s"] = "x" * 300
        attrs["ints"] = list(range(40))
        attrs["strings"] = [b"\xff\x1b[31m", b"ok"]
        attrs["t"] = helper.make_tensor("c", TensorProto.FLOAT, [2], [1.0, 2.0])
        nodes.append(helper.make_node("Identity", [f"x{i}"], [f"x{i + 1}"], name="node_" + "n" * 900 + str(i),
                                      **attrs))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("x12", TensorProto.FLOAT, [1])])
    write(t, "long_names_many_attributes", model(graph))
    strings = [helper.make_tensor(f"s{i}", TensorProto.STRING, [8], [b"x" * 16, b"\xff\xfe", b"", b"\x1b[2J"] * 2)
               for i in range(60)]
    write(t, "string_initializers", model(helper.make_graph([], "g", [], [], initializer=strings)))
    # External data: the fuzz target resolves every location to the input itself, so offsets and
    # lengths land inside, at and past its end.
    initializers = []
    for i, (offset, length) in enumerate([("0", "16"), ("8", "4"), ("4096", "16"), ("0", str(2 ** 63)),
                                          ("-4", "4"), (None, None), ("0", "abc")]):
        w = helper.make_tensor(f"w{i}", TensorProto.FLOAT, [4], [0.0] * 4)
        w.data_location = TensorProto.EXTERNAL
        del w.float_data[:]
        for key, value in (("location", "weights.bin"), ("offset", offset), ("length", length),
                           ("checksum", "0" * 40)):
            if value is not None:
                entry = w.external_data.add()
                entry.key, entry.value = key, value
        initializers.append(w)
    for location in ("../../etc/passwd", "/etc/passwd", "a\x1b[1m\nb", ""):
        w = helper.make_tensor("loc", TensorProto.FLOAT, [1], [0.0])
        w.data_location = TensorProto.EXTERNAL
        del w.float_data[:]
        entry = w.external_data.add()
        entry.key, entry.value = "location", location
        initializers.append(w)
    write(t, "external_data", model(helper.make_graph([], "g", [], [], initializer=initializers)))
    m = onnx.ModelProto()
    m.ir_version = 8
    m.opset_import.add().version = 17
    m.producer_name = "seed"
    p = m.metadata_props.add()
    p.key, p.value = "k\x1b", "v" * 100
    write(t, "no_graph", m.SerializeToString())
    huge = helper.make_tensor("h", TensorProto.FLOAT, [0], [])
    del huge.dims[:]
    huge.dims.extend([HUGE, 0])
    overflow = helper.make_tensor("o", TensorProto.FLOAT, [1], [1.0])
    del overflow.dims[:]
    overflow.dims.extend([2 ** 32, 2 ** 32])
    raw = helper.make_tensor("r", TensorProto.FLOAT16, [3], b"\x00\x3c" * 3, raw=True)
    raw.raw_data = b"\x00\x3c" * 2  # shorter than its dims say
    write(t, "huge_dims", model(helper.make_graph([], "g", [], [], initializer=[huge, overflow, raw])))
    itemsizes = {TensorProto.FLOAT: 4, TensorProto.DOUBLE: 8, TensorProto.INT64: 8, TensorProto.INT32: 4,
                 TensorProto.INT8: 1, TensorProto.UINT8: 1, TensorProto.BOOL: 1, TensorProto.FLOAT16: 2,
                 TensorProto.BFLOAT16: 2, TensorProto.UINT64: 8, TensorProto.COMPLEX64: 8}
    typed = []
    for d, itemsize in itemsizes.items():
        tensor = helper.make_tensor(f"d{d}", TensorProto.UINT8, [4 * itemsize], bytes(range(4 * itemsize)), raw=True)
        tensor.data_type = d
        del tensor.dims[:]
        tensor.dims.extend([2, 2])
        typed.append(tensor)
    write(t, "dtypes_raw", model(helper.make_graph([], "g", [], [], initializer=typed)))
    sparse = helper.make_sparse_tensor(helper.make_tensor("sv", TensorProto.FLOAT, [2], [1.0, 2.0]),
                                       helper.make_tensor("si", TensorProto.INT64, [2], [1, 2 ** 40]), [HUGE])
    g = helper.make_graph([], "g", [], [], sparse_initializer=[sparse])
    write(t, "sparse_initializer", model(g))
    inner = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "inner", [], [])
    for _ in range(30):
        inner = helper.make_graph([helper.make_node("If", ["c"], ["b"], then_branch=inner, else_branch=inner)],
                                  "nested", [], [])
        if len(inner.SerializeToString()) > 20000:
            break
    write(t, "nested_subgraphs", model(inner))


# --- GGUF v3: header, key/values, tensor infos, aligned data.
def g_str(s):
    b = s if isinstance(s, bytes) else s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf(kvs, tensors, data=b"", version=3, alignment=32):
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs) + 1)
    out += g_str("general.alignment") + struct.pack("<II", 4, alignment)
    for key, vtype, payload in kvs:
        out += g_str(key) + struct.pack("<I", vtype) + payload
    for name, dims, ttype, offset in tensors:
        out += g_str(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ttype, offset)
    pad = alignment or 32  # the padding of a file that claims alignment 0: the default
    out += b"\0" * ((pad - len(out) % pad) % pad)
    return out + data


def gguf_seeds():
    t = "gguf_fuzz"
    write(t, "huge_empty", gguf([], [("t", [0, HUGE], 0, 0), ("u", [HUGE, 0, HUGE], 1, 0)]))
    write(t, "huge_overflow", gguf([], [("t", [2 ** 32, 2 ** 32], 0, 0)], b"\0" * 32))
    write(t, "invalid_utf8_keys", gguf([(b"\xff\xfe", 8, g_str("v")), (b"k\x1b[31m\n", 4, struct.pack("<I", 1)),
                                        (b"\xed\xa0\x80", 8, g_str(b"\xc0\xaf"))],
                                       [(b"\xff.weight", [4], 0, 0), ("ok\x07", [4], 0, 0)], b"\0" * 16))
    values = [("u8", 0, b"\x01"), ("i8", 1, b"\xff"), ("u16", 2, b"\x01\x00"), ("i16", 3, b"\xff\xff"),
              ("u32", 4, struct.pack("<I", 7)), ("i32", 5, struct.pack("<i", -7)), ("f32", 6, struct.pack("<f", .5)),
              ("bool", 7, b"\x02"), ("str", 8, g_str("x" * 2000)), ("u64", 10, struct.pack("<Q", 2 ** 64 - 1)),
              ("i64", 11, struct.pack("<q", -1)), ("f64", 12, struct.pack("<d", float("nan"))),
              ("arr_str", 9, struct.pack("<IQ", 8, 3) + g_str("a") + g_str("") + g_str("\x1b")),
              ("arr_nested", 9, struct.pack("<IQ", 9, 2) + struct.pack("<IQ", 4, 1) + struct.pack("<I", 1) +
               struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 0, 2) + b"\x01\x02"),
              ("arr_huge", 9, struct.pack("<IQ", 0, 2 ** 62)),
              ("bad_type", 99, b"\0" * 8)]
    write(t, "all_value_types", gguf(values[:-2], [("t", [2, 2], 0, 0)], b"\0" * 16))
    write(t, "huge_array", gguf(values[-2:-1], []))
    write(t, "bad_value_type", gguf(values[-1:], []))
    types = [0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 24, 26, 28, 30, 99]
    tensors, offset = [], 0
    for i, ty in enumerate(types):
        tensors.append((f"t{ty}", [256, 2], ty, offset))
        offset += 1024
    write(t, "tensor_types", gguf([], tensors, bytes(range(256)) * (offset // 256)))
    write(t, "alignment_odd", gguf([], [("t", [1], 0, 0)], b"\0" * 4, alignment=3))
    write(t, "alignment_zero", gguf([], [("t", [1], 0, 0)], b"\0" * 4, alignment=0))
    write(t, "version2", gguf([], [("t", [4], 0, 0)], b"\0" * 16, version=2))
    write(t, "many_kvs", gguf([(f"k{i}", 4, struct.pack("<I", i)) for i in range(3000)], []))


# --- run directories: report.json and metrics.jsonl.
def run_seeds(run_dir):
    finding = {"rule": "nonfinite", "severity": "error", "step": 5, "phase": "forward", "module": "fc2",
               "op": "fc2.log", "message": "fc2.log makes NaN from finite inputs", "suggestion": "clamp its input",
               "count": 7, "last_step": 11, "evidence": {"nan": 1, "propagators": [3, 4], "note": "x",
                                                         "none": None},
               "latest": {"step": 11, "phase": "forward", "module": "fc2", "op": "fc2.log", "message": "again",
                          "evidence": {}},
               "worst": None}
    report = {"tool": "tfdebug", "version": "0.1.0", "complete": False, "steps": 7, "first_step": 0,
              "last_step": 6, "observations": 56, "counts": {"error": 1, "warning": 0, "info": 0},
              "stopped": False, "findings": [finding],
              "spectral": [{"module": "fc1", "parameter": "fc1.weight", "step": 0, "spectral_norm": 0.07,
                            "stable_rank": 2.2, "iterations": 6}],
              "flight_recorder": "flight_recorder.json",
              "dropped": {"findings": 0, "untracked_observations": 0, "op_summaries": 0, "sink_events": 0},
              "hook_errors": [], "config": {"console": "false", "max_findings": "1000"}}
    t = "run_report_fuzz"
    write(t, "killed.json", json.dumps(report, indent=1))
    minimal = {k: report[k] for k in ("tool", "version", "steps", "first_step", "last_step", "observations",
                                      "stopped", "findings", "spectral", "flight_recorder", "dropped", "hook_errors")}
    minimal.update(findings=[], spectral=[], flight_recorder=None)
    write(t, "minimal.json", json.dumps(minimal, separators=(",", ":")))
    hostile = dict(report, findings=[dict(finding, message="\x1b[31m\nline\u202e", module="\ud800".encode(
        "utf-8", "surrogatepass").decode("latin-1"))] * 40)
    write(t, "many_findings.json", json.dumps(hostile))
    write(t, "deep.json", b'{"tool":"tfdebug","version":' + b"[" * 300 + b"]" * 300 + b"}")
    write(t, "wide.json", json.dumps({"tool": "tfdebug", "config": {f"k{i}": "v" for i in range(300)}}))
    write(t, "numbers.json", json.dumps(dict(minimal, steps=2 ** 63, first_step=-2 ** 63, last_step=1e300,
                                             observations=-1)))
    m = "metrics_jsonl_fuzz"
    line = {"step": 0, "loss": 2.0, "modules": {"fc1": {"grad_norm": 0.03, "update_ratio": 0.028, "activations": {
        "outputs": 1, "values": 128, "nonfinite": 0, "zero_fraction": 1.0, "abs_max": 0.0, "dead_fraction": 1.0}},
        "(top level)": {"grad_norm": None, "update_ratio": None}}}
    lines = [json.dumps(dict(line, step=s), separators=(",", ":")) for s in range(4)]
    lines.append(json.dumps({"step": 4, "loss": None, "loss_nonfinite": "nan", "modules": {}}))
    write(m, "steps.jsonl", "\n".join(lines) + "\n")
    write(m, "cut_off.jsonl", "\n".join(lines) + "\n" + lines[0][:40])
    write(m, "empty_lines.jsonl", "\n\n" + lines[0] + "\r\n\n")
    wide = {"step": 9, "loss": 1.0, "modules": {f"blocks.{i}.attn.\x1b[1m": {"grad_norm": 1.0} for i in range(400)}}
    write(m, "many_modules.jsonl", json.dumps(wide) + "\n")
    write(m, "deep.jsonl", b'{"step":1,"modules":' + b"[" * 300 + b"]" * 300 + b"}\n")
    write(m, "numbers.jsonl", json.dumps({"step": 2 ** 63, "loss": 1e308, "modules": {"a": {
        "grad_norm": -0.0, "activations": {"outputs": -1, "values": 2 ** 64, "zero_fraction": 2.0}}}}) + "\n")
    if run_dir:
        for name, target in (("report.json", t), ("metrics.jsonl", m)):
            with open(os.path.join(run_dir, name), "rb") as f:
                data = f.read()
            if len(data) <= MAX_SEED:
                write(target, "run_" + name, data)


# --- dictionaries: the tokens a mutation should not have to find byte by byte.
JSON_TOKENS = ['{', '}', '[', ']', ':', ',', '"', '\\"', '\\\\', '\\u0000', '\\ud800', '\\udc00', 'true', 'false',
               'null', '-0', '1e309', '-1e-400', '18446744073709551616', '9223372036854775807',
               '4611686018427387904', '0.5']
SAFETENSORS_TOKENS = ['"dtype"', '"shape"', '"data_offsets"', '"__metadata__"', '"F32"', '"F16"', '"BF16"', '"F64"',
                      '"I64"', '"I32"', '"I8"', '"U8"', '"BOOL"', '"F8_E4M3"', '"F8_E5M2"', '"format"', '"pt"']
RUN_TOKENS = ['"tool"', '"tfdebug"', '"version"', '"complete"', '"steps"', '"first_step"', '"last_step"',
              '"observations"', '"counts"', '"stopped"', '"findings"', '"spectral"', '"flight_recorder"',
              '"dropped"', '"hook_errors"', '"config"', '"rule"', '"severity"', '"error"', '"warning"', '"info"',
              '"step"', '"phase"', '"forward"', '"backward"', '"optimizer"', '"module"', '"op"', '"message"',
              '"suggestion"', '"count"', '"evidence"', '"latest"', '"worst"', '"parameter"', '"spectral_norm"',
              '"stable_rank"', '"iterations"', '"loss"', '"loss_nonfinite"', '"modules"', '"grad_norm"',
              '"update_ratio"', '"activations"', '"outputs"', '"values"', '"nonfinite"', '"zero_fraction"',
              '"abs_max"', '"dead_fraction"', '"(top level)"', '"nan"', '"inf"', '"-inf"']
PICKLE_TOKENS = ['\x80\x02', '\x80\x04', '\x80\x05', '\x95', '.', '(', ')', ']', '}', 't', 'l', 'd', 'a', 'e',
                 's', 'u', 'R', 'b', 'Q', 'N', '\x88', '\x89', 'K', 'M', 'J', '\x8a', 'G', 'X', '\x8c', 'C', 'B',
                 'q', 'r', 'h', 'j', '\x94', '\x93', '\x81', '\x85', '\x86', '\x87', '0', '1', '2', 'c', 'i',
                 'o', '\x8d', '\x8e', '\x96', '\x97', '\x98', 'cos\nsystem\n', 'ctorch._utils\n_rebuild_tensor_v2\n',
                 'ccollections\nOrderedDict\n', 'ctorch\nFloatStorage\n', 'ctorch\nHalfStorage\n',
                 'ctorch\nBFloat16Storage\n', 'cbuiltins\ngetattr\n', 'X\x07\x00\x00\x00storage', 'X\x03\x00\x00\x00cpu',
                 '\xff\xff\xff\xff', '\x00\x00\x00\x00\x00\x00\x00\x40']
ZIP_TOKENS = ['PK\x03\x04', 'PK\x01\x02', 'PK\x05\x06', 'PK\x06\x06', 'PK\x06\x07', 'archive/data.pkl',
              'archive/data/0', 'archive/version']


def write_dict(target, tokens):
    def escape(token):
        return "".join(c if 0x20 <= ord(c) < 0x7f and c not in '"\\' else f"\\x{ord(c):02x}" for c in token)

    with open(os.path.join(HERE, target + ".dict"), "w") as f:
        f.write(f"# libFuzzer dictionary of {target}, written by fuzz/make_seeds.py.\n")
        for i, token in enumerate(tokens):
            f.write(f'kw{i}="{escape(token)}"\n')


def main():
    warnings.simplefilter("ignore")  # zipfile's, for the duplicate member written on purpose
    run_dir = sys.argv[1] if len(sys.argv) > 1 else None
    st_seeds()
    npy_seeds()
    npz_seeds()
    pickle_seeds()
    pytorch_seeds()
    onnx_seeds()
    gguf_seeds()
    run_seeds(run_dir)
    write_dict("safetensors_fuzz", JSON_TOKENS + SAFETENSORS_TOKENS)
    write_dict("run_report_fuzz", JSON_TOKENS + RUN_TOKENS)
    write_dict("metrics_jsonl_fuzz", JSON_TOKENS + RUN_TOKENS + ["\n", "\r\n"])
    write_dict("pickle_fuzz", PICKLE_TOKENS)
    write_dict("pickle_scan_fuzz", PICKLE_TOKENS)
    write_dict("pytorch_fuzz", PICKLE_TOKENS + ZIP_TOKENS)


if __name__ == "__main__":
    main()
