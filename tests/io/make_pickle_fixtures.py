#!/usr/bin/env python3
"""Writes the pickle-safety fixtures of `tfdebug scan` and `inspect`: malicious pickles and benign
checkpoints, with what the scanner must report for each.

Usage: /usr/bin/python3 tests/io/make_pickle_fixtures.py OUT_DIR    (Debian's python3-torch)

OUT_DIR/evil/*   pickles that run code under torch.load / pickle.load. They are written byte by
                 byte with pickle opcodes, or by pickle.dumps / torch.save of an object whose
                 __reduce__ returns the call. NOTHING HERE IS EVER UNPICKLED: no pickle.load,
                 torch.load or numpy.load(allow_pickle=True) is called on them, here or in the tests.
OUT_DIR/benign/* what torch.save, pickle and numpy write for real checkpoints.
OUT_DIR/expected.json  {file: {"verdict": ..., "flagged": {global: [risk, called]}}}: every global
                 that is not allowed, exactly; the C++ test and the CLI test hold the scanner to it.
"""
import argparse
import io
import json
import os
import pickle
import struct
import sys
import zipfile

import numpy as np
import torch

out = sys.argv[1]
for sub in ("evil", "benign"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)
expected = {}


def put(name, data, verdict, flagged=None):
    """Writes bytes, with the verdict and the exact non-allowed globals (global -> [risk, called])."""
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
    expect(name, verdict, flagged)


def expect(name, verdict, flagged=None):
    expected[name] = {"verdict": verdict, "flagged": flagged or {}}


def s0(text):
    """A protocol-0 STRING operand."""
    return b"S'" + text.encode() + b"'\n"


def u(text):
    """A SHORT_BINUNICODE operand."""
    b = text.encode()
    return b"\x8c" + bytes([len(b)]) + b


SHELL = "echo tfdebug must never run this"
RUNS, CALLED, REF = "runs_code", True, False

# ---- Hand-written opcodes --------------------------------------------------------------------
# os.system through protocol 0 GLOBAL + REDUCE (the classic).
put("evil/p0_global_os_system.pkl", b"cos\nsystem\n(" + s0(SHELL) + b"tR.", "error", {"os.system": [RUNS, CALLED]})
# posix.system through protocol 4 STACK_GLOBAL, with FRAME and MEMOIZE.
body = b"\x8c\x05posix\x94\x8c\x06system\x94\x93\x94" + u(SHELL) + b"\x94\x85\x94R\x94."
put("evil/p4_stack_global_posix.pkl", b"\x80\x04\x95" + struct.pack("<Q", len(body)) + body, "error",
    {"posix.system": [RUNS, CALLED]})
# INST: the class from two lines, called with what follows MARK.
put("evil/inst_os_system.pkl", b"(" + s0(SHELL) + b"ios\nsystem\n.", "error", {"os.system": [RUNS, CALLED]})
# OBJ: the class is the first item after MARK.
put("evil/obj_subprocess_popen.pkl", b"(csubprocess\nPopen\n(" + s0("echo") + b"lo.", "error",
    {"subprocess.Popen": [RUNS, CALLED]})
# Python 2's commands module and subprocess.call.
put("evil/commands_getoutput.pkl", b"ccommands\ngetoutput\n(" + s0("id") + b"tR.", "error",
    {"commands.getoutput": [RUNS, CALLED]})
put("evil/subprocess_call.pkl", b"\x80\x02csubprocess\ncall\n]" + u("echo") + b"a\x85R.", "error",
    {"subprocess.call": [RUNS, CALLED]})
# Code given as text to timeit, cProfile, pdb.
code = "__import__('os').system('echo')"
put("evil/timeit.pkl", b"\x80\x02ctimeit\ntimeit\n" + u(code) + b"\x85R.", "error", {"timeit.timeit": [RUNS, CALLED]})
put("evil/cprofile_run.pkl", b"\x80\x02ccProfile\nrun\n" + u(code) + b"\x85R.", "error", {"cProfile.run": [RUNS, CALLED]})
put("evil/pdb_run.pkl", b"\x80\x02cpdb\nrun\n" + u(code) + b"\x85R.", "error", {"pdb.run": [RUNS, CALLED]})
# cPickle.loads of a nested payload (protocol 0 STRING with escapes) that calls posix.system:
# both the outer call and the nested one are reported.
inner = b"cposix\nsystem\n(S'echo'\ntR."
escaped = inner.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"'", b"\\'")
put("evil/cpickle_loads_nested.pkl", b"ccPickle\nloads\n(S'" + escaped + b"'\ntR.", "error",
    {"cPickle.loads": [RUNS, CALLED], "posix.system": [RUNS, CALLED]})
# pickle.loads of a BINBYTES payload (protocol 2).
put("evil/pickle_loads_bytes.pkl", b"\x80\x02c_pickle\nloads\nC" + bytes([len(inner)]) + inner + b"\x85R.", "error",
    {"_pickle.loads": [RUNS, CALLED], "posix.system": [RUNS, CALLED]})
# getattr chains: getattr(__import__('os'), 'system')('echo').
put("evil/getattr_chain.pkl",
    b"c__builtin__\ngetattr\n(c__builtin__\n__import__\n(S'os'\ntRS'system'\ntR(" + s0(SHELL) + b"tR.", "error",
    {"__builtin__.getattr": [RUNS, CALLED], "__builtin__.__import__": [RUNS, CALLED]})
# Memo tricks: the module and name strings stored early, fetched by BINGET for STACK_GLOBAL.
put("evil/memo_stack_global.pkl",
    b"\x80\x04" + u("posix") + b"q\x07" + u("system") + b"q\x080]h\x07h\x08\x93" + u(SHELL) + b"\x85R0.", "error",
    {"posix.system": [RUNS, CALLED]})
# The same strings hidden in protocol-0 UNICODE escapes for STACK_GLOBAL.
put("evil/unicode_escape_stack_global.pkl", b"\x80\x04V\\u006fs\nVsystem\n\x93(" + s0(SHELL) + b"tR.", "error",
    {"os.system": [RUNS, CALLED]})
# A dotted protocol-4 name that reaches builtins through an allowed class's dunders.
put("evil/dunder_dotted_name.pkl", b"\x80\x04" + u("argparse") + u("Namespace.__init__.__globals__") + b"\x93.",
    "error", {"argparse.Namespace.__init__.__globals__": [RUNS, REF]})
# A dotted name through an allowed module's own imports: torch._utils imports sys.
put("evil/module_attribute_sys.pkl", b"\x80\x04" + u("torch._utils") + u("sys.modules") + b"\x93.", "error",
    {"torch._utils.sys.modules": [RUNS, REF]})
# A STACK_GLOBAL whose module name is computed (the result of a call).
put("evil/computed_stack_global.pkl",
    b"\x80\x04c_codecs\nencode\n" + u("cbfvk") + u("rot13") + b"\x86R" + u("system") + b"\x93.", "error",
    {"<computed>.<computed>": [RUNS, REF]})
# builtins that run code, by protocol-3 name.
for fn in ("eval", "exec", "compile", "open"):
    put(f"evil/builtins_{fn}.pkl", b"\x80\x03cbuiltins\n" + fn.encode() + b"\n" + u("1") + b"\x85R.", "error",
        {f"builtins.{fn}": [RUNS, CALLED]})
# The rest of the deny-list, one call each.
for module, name in [("numpy.testing._private.utils", "runstring"), ("operator", "attrgetter"),
                     ("functools", "partial"), ("torch", "load"), ("torch.hub", "load"), ("torch.jit", "load"),
                     ("numpy", "load"), ("runpy", "run_path"), ("importlib", "import_module"),
                     ("marshal", "loads"), ("ctypes", "CDLL"), ("socket", "create_connection"),
                     ("shutil", "rmtree"), ("webbrowser", "open"), ("pty", "spawn"), ("code", "interact"),
                     ("sys", "exit"), ("types", "FunctionType"), ("asyncio", "run"),
                     ("multiprocessing", "Process"), ("bdb", "Bdb"), ("trace", "Trace"), ("profile", "run"),
                     ("nt", "system"), ("aiohttp.client", "request"), ("requests.api", "get"),
                     ("torch.serialization", "load"), ("torch._inductor.codecache", "compile_file")]:
    put(f"evil/deny_{module}.{name}.pkl",
        b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n" + u("x") + b"\x85R.", "error",
        {f"{module}.{name}": [RUNS, CALLED]})
# A call, then a pickle cut short: Python has run the call before it finds the end missing.
put("evil/truncated_after_call.pkl", b"\x80\x02cposix\nsystem\n" + u(SHELL) + b"\x85R}(", "error",
    {"posix.system": [RUNS, CALLED]})
# EXT1: a global from copyreg's extension registry, unknown to a static reader.
put("evil/ext1_call.pkl", b"\x80\x02\x82\x07" + u("x") + b"\x85R.", "warning",
    {"copyreg extension.7": ["imports", CALLED]})
# BUILD on a global itself: setattr on the class (monkey-patching OrderedDict).
put("evil/build_on_class.pkl", b"\x80\x02ccollections\nOrderedDict\nN}" + u("update") + b"Ns\x86b.", "warning",
    {"collections.OrderedDict": ["imports", REF]})
# torch.storage._load_from_bytes whose argument is not a literal: tfdebug cannot see what it loads.
put("evil/load_from_bytes_computed.pkl",
    b"\x80\x02ctorch.storage\n_load_from_bytes\nc__builtin__\nbytes\n]K\x41a\x85R\x85R.", "error",
    {"torch.storage._load_from_bytes": [RUNS, CALLED]})


# ---- The peers' test cases (picklescan's tests/init_data_files.py, its GHSA advisories) ---------
# Each as protocol 4 writes it: STACK_GLOBAL of the function's module and qualified name, called.
for module, name in [("builtins", "eval"), ("posix", "system"), ("http.client", "HTTPSConnection"),
                     ("requests.api", "get"), ("aiohttp.client", "ClientSession"),
                     ("socket", "create_connection"), ("subprocess", "run"), ("sys", "exit"),
                     ("_pickle", "loads"), ("runpy", "_run_code"), ("bdb", "Bdb.run"), ("pip", "main"),
                     ("torch._inductor.codecache", "compile_file"), ("pydoc", "pipepager"), ("venv", "create"),
                     ("timeit", "timeit"), ("numpy.testing._private.utils", "runstring"),
                     ("torch.utils.bottleneck.__main__", "run_cprofile"),
                     ("torch.utils.bottleneck.__main__", "run_autograd_prof"),
                     ("torch._dynamo.guards", "GuardBuilder.get"),
                     ("torch.fx.experimental.symbolic_shapes", "ShapeEnv.evaluate_guards_expression"),
                     ("torch.utils.collect_env", "run"), ("torch.utils.collect_env", "run_and_read_all"),
                     ("torch.utils.data.datapipes.utils.decoder", "basichandlers"),
                     ("torch.jit.unsupported_tensor_ops", "execWrapper"),
                     ("torch.utils._config_module", "ConfigModule.load_config"), ("trace", "Trace.run"),
                     ("trace", "Trace.runctx"), ("profile", "Profile.run"), ("profile", "Profile.runctx"),
                     ("lib2to3.pgen2.grammar", "Grammar.loads"), ("lib2to3.pgen2.pgen", "ParserGenerator.make_label"),
                     ("idlelib.debugobj", "ObjectTreeItem.SetText"), ("idlelib.autocomplete", "AutoComplete.get_entity"),
                     ("idlelib.autocomplete", "AutoComplete.fetch_completions"), ("idlelib.calltip", "Calltip.fetch_tip"),
                     ("idlelib.calltip", "get_entity"), ("idlelib.run", "Executive.runcode"),
                     ("idlelib.pyshell", "ModifiedInterpreter.runcommand"),
                     ("idlelib.pyshell", "ModifiedInterpreter.runcode"), ("code", "InteractiveInterpreter.runcode"),
                     ("doctest", "debug_script"), ("cProfile", "runctx"), ("cProfile", "run"), ("ensurepip", "_run_pip"),
                     ("asyncio.unix_events", "_UnixSubprocessTransport._start"),
                     ("distutils.file_util", "write_file"), ("ctypes", "CDLL"), ("pty", "spawn"),
                     ("numpy.f2py.crackfortran", "getlincoef"), ("io", "FileIO"), ("urllib.request", "urlopen"),
                     ("operator", "methodcaller"), ("pydoc", "locate")]:
    put(f"evil/peer_{module}.{name}.pkl", b"\x80\x04" + u(module) + u(name) + b"\x93" + u("x") + b"\x85R.", "error",
        {f"{module}.{name}": [RUNS, CALLED]})
# "Sour pickles" (Slaviero, Black Hat 2011), as picklescan's malicious0.pkl: globals, compile,
# eval, getattr(dict, 'get'), apply.
put("evil/peer_sour_pickles.pkl",
    b"c__builtin__\nglobals\n(tRp100\n0c__builtin__\ncompile\n(S'fl=open(\"/etc/passwd\");picklesmashed=fl.read();"
    b"'\nS''\nS'exec'\ntRp101\n0c__builtin__\neval\n(g101\ng100\ntRp102\n0c__builtin__\ngetattr\n(c__builtin__\n"
    b"dict\nS'get'\ntRp103\n0c__builtin__\napply\n(g103\n(g100\nS'picklesmashed'\nltRp104\n0g104\n.", "error",
    {"__builtin__.globals": [RUNS, CALLED], "__builtin__.compile": [RUNS, CALLED], "__builtin__.eval": [RUNS, CALLED],
     "__builtin__.getattr": [RUNS, CALLED], "__builtin__.apply": [RUNS, CALLED]})
# INST of exec (picklescan's malicious10.pkl).
put("evil/peer_inst_exec.pkl", b"(S'raise RuntimeError(\"Injection running\")'\ni__builtin__\nexec\n.", "error",
    {"__builtin__.exec": [RUNS, CALLED]})
# Memo strings behind a decoy torch.LongStorage (picklescan's malicious11.pkl, a CTF's "Safe Pickle").
put("evil/peer_memo_decoy.pkl",
    b"Vos\np2\n0Vsystem\np3\n0Vtorch\np0\n0VLongStorage\np1\n0g2\ng3\n\x93(Vcat flag.txt\ntR.", "error",
    {"os.system": [RUNS, CALLED]})

# ---- Written by pickle, numpy and torch.save from objects whose __reduce__ is the call --------
class Shell:
    def __reduce__(self):
        return (os.system, (SHELL,))


sd = torch.nn.Linear(3, 2).state_dict()
# A state dict with a call inside, written by torch.save: its tensors are still listed by inspect.
evil_sd = dict(sd)
evil_sd["note"] = Shell()
torch.save(evil_sd, os.path.join(out, "evil/state_dict_reduce.pt"))
expect("evil/state_dict_reduce.pt", "error", {"posix.system": [RUNS, CALLED]})
# Nested in a list, protocol 2.
put("evil/nested_in_list.pkl", pickle.dumps({"layers": [1, [2, Shell()]]}, protocol=2), "error",
    {"posix.system": [RUNS, CALLED]})
# A legacy (pre-1.6) torch.save with the call.
torch.save({"w": torch.ones(2), "x": Shell()}, os.path.join(out, "evil/legacy.pt"),
           _use_new_zipfile_serialization=False)
expect("evil/legacy.pt", "error", {"posix.system": [RUNS, CALLED]})
# An object array in .npy and in an .npz member.
np.save(os.path.join(out, "evil/objects.npy"), np.array([1, Shell()], dtype=object), allow_pickle=True)
expect("evil/objects.npy", "error", {"posix.system": [RUNS, CALLED]})
np.savez(os.path.join(out, "evil/objects.npz"), w=np.ones(3), o=np.array([Shell()], dtype=object))
expect("evil/objects.npz", "error", {"posix.system": [RUNS, CALLED]})
# A plain zip archive with a .pkl member.
with zipfile.ZipFile(os.path.join(out, "evil/archive.zip"), "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("model/payload.pkl", pickle.dumps(Shell(), protocol=4))
    z.writestr("README.txt", "not scanned")
expect("evil/archive.zip", "error", {"posix.system": [RUNS, CALLED]})


# ---- Benign: what real checkpoints hold --------------------------------------------------------
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.LayerNorm(3))

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
net = Net()
torch.save(net.state_dict(), os.path.join(out, "benign/state_dict.pt"))
expect("benign/state_dict.pt", "clean")
opt = torch.optim.Adam(net.parameters(), lr=0.1)
net(torch.ones(2, 4)).sum().backward()
opt.step()
torch.save(opt.state_dict(), os.path.join(out, "benign/optimizer.pt"))
expect("benign/optimizer.pt", "clean")
torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
            "args": argparse.Namespace(lr=0.1, layers=2), "best": np.float64(0.25), "step": np.int64(7),
            "device": torch.device("cpu"), "dtype": torch.bfloat16, "size": torch.Size([2, 3]),
            "ids": {1, 2}, "frozen": frozenset({3}), "span": slice(1, 5), "z": complex(1, 2),
            "raw": bytearray(b"ab"), "r": range(3)},
           os.path.join(out, "benign/training_checkpoint.pt"))
expect("benign/training_checkpoint.pt", "clean")
# A full module of torch.nn classes: info findings, no error.
full = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
torch.save(full, os.path.join(out, "benign/full_module.pt"))
expect("benign/full_module.pt", "info", {"torch.nn.modules.container.Sequential": ["full_module", CALLED],
                                         "torch.nn.modules.linear.Linear": ["full_module", CALLED],
                                         "torch.nn.modules.activation.ReLU": ["full_module", CALLED]})
# A whole transformer layer: it keeps its activation as torch.nn.functional.relu, a function
# referenced by name (allowed), beside its module classes (info).
torch.save(torch.nn.TransformerEncoderLayer(8, 2, 16), os.path.join(out, "benign/full_transformer.pt"))
expect("benign/full_transformer.pt", "info",
       {f"torch.nn.modules.{m}": ["full_module", CALLED]
        for m in ("transformer.TransformerEncoderLayer", "activation.MultiheadAttention",
                  "linear.NonDynamicallyQuantizableLinear", "linear.Linear", "dropout.Dropout",
                  "normalization.LayerNorm")})
# A user class from the saving script: torch.load imports __main__: a warning.
torch.save(net, os.path.join(out, "benign/user_module.pt"))
expect("benign/user_module.pt", "warning", {"__main__.Net": ["imports", CALLED],
                                            "torch.nn.modules.container.Sequential": ["full_module", CALLED],
                                            "torch.nn.modules.linear.Linear": ["full_module", CALLED],
                                            "torch.nn.modules.activation.ReLU": ["full_module", CALLED],
                                            "torch.nn.modules.normalization.LayerNorm": ["full_module", CALLED]})
torch.save(net.state_dict(), os.path.join(out, "benign/legacy.pt"), _use_new_zipfile_serialization=False)
expect("benign/legacy.pt", "clean")
# numpy arrays pickled in .pkl files, protocols 2 and 5, and a tensor through plain pickle
# (its storage goes through torch.storage._load_from_bytes: a nested legacy torch.save).
arrays = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([1, 2], dtype=np.int64)}
for proto in (2, 5):
    put(f"benign/numpy_p{proto}.pkl", pickle.dumps(arrays, protocol=proto), "clean")
put("benign/tensor_pickle.pkl", pickle.dumps({"t": torch.arange(4.0)}, protocol=2), "clean")
np.save(os.path.join(out, "benign/objects.npy"), np.array([1, "a", None, 2.5], dtype=object), allow_pickle=True)
expect("benign/objects.npy", "clean")
np.savez(os.path.join(out, "benign/arrays.npz"), w=np.ones(3))
expect("benign/arrays.npz", "clean")
np.save(os.path.join(out, "benign/plain.npy"), np.ones(3))
expect("benign/plain.npy", "clean")

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
