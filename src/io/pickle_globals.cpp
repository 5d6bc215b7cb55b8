// The verdict on a pickle global, by name. Note [Pickle allow-list]:
// A checkpoint legitimately references a short list of things: torch's tensor and parameter
// rebuilders and storage types, dtypes, devices and sizes, containers (OrderedDict), numpy's
// array rebuilders, argparse.Namespace, the harmless builtin constructors. Everything else is
// either on the deny-list (it runs code or touches the system when `torch.load` imports and calls
// it: the union of what picklescan, fickling and ModelScan flag, docs/scan.md) or unknown, which
// means torch.load imports that module and calls into it: a warning. Allowed names match exactly:
// pickle protocol 4 resolves dotted names attribute by attribute, so `torch._utils.sys.modules`
// reaches `sys` through an allowed module; a dotted name is judged by each of its parts.
#include "pickle_globals.hpp"

#include <algorithm>
#include <optional>

namespace tfdebug::io::detail {
namespace {

struct Rule {
  std::string_view module;  // the module, and its submodules
  std::string_view name;    // "" for every name; else this name (and its attributes)
  std::string_view reason;
};

constexpr std::string_view kShell = "runs a shell command or a program";
constexpr std::string_view kPython = "compiles or runs Python code";
constexpr std::string_view kProfiler = "runs Python code given as text (a profiler, debugger or timer)";
constexpr std::string_view kImport = "imports arbitrary modules";
constexpr std::string_view kReach = "reaches arbitrary objects of the running program";
constexpr std::string_view kCall = "calls, or reaches attributes of, the objects it is given";
constexpr std::string_view kNetwork = "opens network connections";
constexpr std::string_view kProcess = "starts processes, threads or handlers";
constexpr std::string_view kNative = "calls native code or maps memory";
constexpr std::string_view kNested = "unpickles more data, which may run anything";
constexpr std::string_view kFiles = "reads or writes files, or runs helper programs";
constexpr std::string_view kInstall = "runs code or installs packages";
constexpr std::string_view kLoad = "loads another file, which may run anything";

// Note [Pickle allow-list]: the deny-list. Module rules cover submodules ("os" covers "os.path").
constexpr Rule kDenied[] = {
    {"os", "", kShell},
    {"posix", "", kShell},
    {"nt", "", kShell},
    {"_posixsubprocess", "", kShell},
    {"subprocess", "", kShell},
    {"commands", "", kShell},  // Python 2's subprocess
    {"popen2", "", kShell},
    {"pty", "", kShell},
    {"pexpect", "", kShell},
    {"pipes", "", kShell},
    {"sys", "", kReach},
    {"code", "", kPython},
    {"codeop", "", kPython},
    {"runpy", "", kPython},
    {"marshal", "", kPython},
    {"types", "", kPython},
    {"compile", "", kPython},
    {"exec", "", kPython},
    {"eval", "", kPython},
    {"doctest", "", kPython},
    {"_interpreters", "", kPython},
    {"_xxsubinterpreters", "", kPython},
    {"importlib", "", kImport},
    {"_frozen_importlib", "", kImport},
    {"_frozen_importlib_external", "", kImport},
    {"_imp", "", kImport},
    {"imp", "", kImport},
    {"pkgutil", "", kImport},
    {"zipimport", "", kImport},
    {"site", "", kImport},
    {"gc", "", kReach},
    {"inspect", "", kReach},
    {"test", "", kReach},
    {"unittest", "", kReach},
    {"operator", "", kCall},
    {"_operator", "", kCall},
    {"functools", "", kCall},
    {"cProfile", "", kProfiler},
    {"profile", "", kProfiler},
    {"pdb", "", kProfiler},
    {"bdb", "", kProfiler},
    {"timeit", "", kProfiler},
    {"trace", "", kProfiler},
    {"socket", "", kNetwork},
    {"_socket", "", kNetwork},
    {"ssl", "", kNetwork},
    {"httplib", "", kNetwork},
    {"http", "", kNetwork},
    {"urllib", "", kNetwork},
    {"urllib2", "", kNetwork},
    {"requests", "", kNetwork},
    {"aiohttp", "", kNetwork},
    {"smtplib", "", kNetwork},
    {"imaplib", "", kNetwork},
    {"ftplib", "", kNetwork},
    {"poplib", "", kNetwork},
    {"telnetlib", "", kNetwork},
    {"nntplib", "", kNetwork},
    {"socketserver", "", kNetwork},
    {"xmlrpc", "", kNetwork},
    {"webbrowser", "", kNetwork},
    {"select", "", kNetwork},
    {"selectors", "", kNetwork},
    {"asyncio", "", kProcess},
    {"multiprocessing", "", kProcess},
    {"threading", "", kProcess},
    {"_thread", "", kProcess},
    {"signal", "", kProcess},
    {"_signal", "", kProcess},
    {"atexit", "", kProcess},
    {"ctypes", "", kNative},
    {"_ctypes", "", kNative},
    {"cffi", "", kNative},
    {"mmap", "", kNative},
    {"pickle", "", kNested},
    {"_pickle", "", kNested},
    {"cPickle", "", kNested},
    {"dill", "", kNested},
    {"cloudpickle", "", kNested},
    {"joblib", "", kNested},
    {"shelve", "", kNested},
    {"shutil", "", kFiles},
    {"tempfile", "", kFiles},
    {"filecmp", "", kFiles},
    {"distutils", "", kFiles},
    {"fileinput", "", kFiles},
    {"glob", "", kFiles},
    {"linecache", "", kFiles},
    {"tarfile", "", kFiles},
    {"zipfile", "", kFiles},
    {"sqlite3", "", kFiles},
    {"_sqlite3", "", kFiles},
    {"compileall", "", kFiles},
    {"py_compile", "", kFiles},
    {"logging", "", kFiles},
    {"syslog", "", kFiles},
    {"platform", "", kFiles},
    {"difflib", "", kFiles},
    {"uuid", "", kFiles},
    {"_osx_support", "", kFiles},
    {"_aix_support", "", kFiles},
    {"io", "open", kFiles},
    {"io", "open_code", kFiles},
    {"io", "FileIO", kFiles},
    {"_io", "open", kFiles},
    {"_io", "open_code", kFiles},
    {"_io", "FileIO", kFiles},
    {"pydoc", "", kInstall},
    {"venv", "", kInstall},
    {"ensurepip", "", kInstall},
    {"pip", "", kInstall},
    {"idlelib", "", kInstall},
    {"lib2to3", "", kInstall},
    {"numpy.f2py", "", kPython},
    {"numpy.testing._private.utils", "", kPython},  // runstring is exec
    {"numpy.distutils", "", kFiles},
    {"numpy.ctypeslib", "", kNative},
    {"numpy", "load", kLoad},
    {"numpy", "fromfile", kFiles},
    {"numpy", "loadtxt", kFiles},
    {"numpy.lib.npyio", "load", kLoad},
    {"numpy.lib._npyio_impl", "load", kLoad},
    {"pandas", "read_pickle", kNested},
    {"pandas.io.pickle", "read_pickle", kNested},
    {"torch", "load", kLoad},
    {"torch.serialization", "load", kLoad},
    {"torch.jit", "load", kLoad},
    {"torch.jit._serialization", "load", kLoad},
    {"torch.hub", "", kLoad},
    {"torch.package", "", kLoad},
    {"torch.utils.bottleneck", "", kProfiler},
    {"torch.utils.collect_env", "", kShell},
    {"torch._inductor.codecache", "", kShell},
    {"torch._dynamo.guards", "", kPython},
    {"torch.jit.unsupported_tensor_ops", "", kPython},
    {"torch.fx.experimental.symbolic_shapes", "ShapeEnv.evaluate_guards_expression", kPython},
    {"torch.utils._config_module", "ConfigModule.load_config", kNested},
    {"torch.utils.data.datapipes.utils.decoder", "basichandlers", kNested},
};

// Builtins (Python 3 `builtins`, Python 2 `__builtin__`, and `__builtins__`).
constexpr std::string_view kBuiltinModules[] = {"builtins", "__builtin__", "__builtins__"};
constexpr std::string_view kSafeBuiltins[] = {
    "bool", "int",       "float", "complex", "str",   "bytes",  "bytearray", "list", "tuple",
    "set",  "frozenset", "dict",  "slice",   "range", "xrange", "object",    "long", "unicode"};
constexpr std::string_view kDangerousBuiltins[] = {
    "eval",       "exec",    "execfile",   "compile",    "open",   "file", "getattr", "setattr",
    "delattr",    "hasattr", "__import__", "globals",    "locals", "vars", "input",   "raw_input",
    "breakpoint", "apply",   "reload",     "memoryview", "help",   "exit", "quit",    "dir"};

struct Allowed {
  std::string_view module;
  std::string_view name;
  std::string_view reason;
};
constexpr std::string_view kContainer = "a container";
constexpr std::string_view kTorchValue = "a torch value type";
constexpr std::string_view kNumpy = "rebuilds a numpy array, dtype or scalar";
constexpr Allowed kAllowed[] = {
    {"collections", "OrderedDict", kContainer},
    {"collections", "defaultdict", kContainer},
    {"collections", "Counter", kContainer},
    {"collections", "deque", kContainer},
    {"torch", "device", kTorchValue},
    {"torch", "Size", kTorchValue},
    {"torch", "Tensor", kTorchValue},
    {"torch", "dtype", kTorchValue},
    {"torch._tensor", "_rebuild_from_type_v2", "a tensor rebuilder"},
    {"torch.nn.parameter", "Parameter", "a tensor rebuilder"},
    {"torch.nn.parameter", "Buffer", "a tensor rebuilder"},
    {"torch.nn.parameter", "UninitializedParameter", "a tensor rebuilder"},
    {"torch.serialization", "_get_layout", "a tensor rebuilder"},
    {"torch.storage", "UntypedStorage", "a storage type"},
    {"torch.storage", "TypedStorage", "a storage type"},
    {"torch.storage", "_load_from_bytes",
     "unpickles its byte-string argument, which is scanned as a nested pickle"},
    {"numpy", "ndarray", kNumpy},
    {"numpy", "dtype", kNumpy},
    {"numpy.core.multiarray", "_reconstruct", kNumpy},
    {"numpy.core.multiarray", "scalar", kNumpy},
    {"numpy._core.multiarray", "_reconstruct", kNumpy},
    {"numpy._core.multiarray", "scalar", kNumpy},
    {"numpy.core.numeric", "_frombuffer", kNumpy},
    {"numpy._core.numeric", "_frombuffer", kNumpy},
    {"argparse", "Namespace", "a namespace of values (hyperparameters)"},
    {"_codecs", "encode", "turns text into bytes, as protocol 2 stores the bytes of numpy arrays"},
    {"copyreg", "_reconstructor", "builds an instance of a class the pickle names (judged itself)"},
    {"copy_reg", "_reconstructor", "builds an instance of a class the pickle names (judged itself)"},
    {"copyreg", "__newobj__", "builds an instance of a class the pickle names (judged itself)"},
    {"copyreg", "__newobj_ex__", "builds an instance of a class the pickle names (judged itself)"},
};

// torch dtypes, layouts, memory formats and quantisation schemes: values, referenced by name.
constexpr std::string_view kTorchConstants[] = {"float32",
                                                "float",
                                                "float64",
                                                "double",
                                                "float16",
                                                "half",
                                                "bfloat16",
                                                "complex32",
                                                "chalf",
                                                "complex64",
                                                "cfloat",
                                                "complex128",
                                                "cdouble",
                                                "uint8",
                                                "uint16",
                                                "uint32",
                                                "uint64",
                                                "int8",
                                                "int16",
                                                "short",
                                                "int32",
                                                "int",
                                                "int64",
                                                "long",
                                                "bool",
                                                "qint8",
                                                "quint8",
                                                "qint32",
                                                "quint4x2",
                                                "quint2x4",
                                                "float8_e4m3fn",
                                                "float8_e4m3fnuz",
                                                "float8_e5m2",
                                                "float8_e5m2fnuz",
                                                "float8_e8m0fnu",
                                                "float4_e2m1fn_x2",
                                                "bits8",
                                                "bits16",
                                                "bits1x8",
                                                "bits2x4",
                                                "bits4x2",
                                                "strided",
                                                "sparse_coo",
                                                "sparse_csr",
                                                "sparse_csc",
                                                "sparse_bsr",
                                                "sparse_bsc",
                                                "jagged",
                                                "_mkldnn",
                                                "contiguous_format",
                                                "channels_last",
                                                "channels_last_3d",
                                                "preserve_format",
                                                "per_tensor_affine",
                                                "per_channel_affine",
                                                "per_tensor_symmetric",
                                                "per_channel_symmetric",
                                                "per_channel_affine_float_qparams"};

bool under(std::string_view module, std::string_view root) {
  return module == root ||
         (module.size() > root.size() && module.starts_with(root) && module[root.size()] == '.');
}

bool identifier(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

template <std::size_t N>
bool one_of(std::string_view s, const std::string_view (&list)[N]) {
  for (const std::string_view item : list) {
    if (s == item) return true;
  }
  return false;
}

GlobalVerdict verdict(GlobalRisk risk, std::string_view reason) {
  return {risk, std::string(reason)};
}

// A dotted name reached attribute by attribute: each part after the first is an attribute of
// the one before. A dunder (`__globals__`, `__builtins__`, `__class__`) or a deny-listed module
// name among them reaches past what the module offers.
std::optional<GlobalVerdict> dotted_name(std::string_view name) {
  if (name.find('.') == std::string_view::npos) return std::nullopt;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view part = name.substr(start, dot - start);
    if (part.size() > 4 && part.starts_with("__") && part.ends_with("__")) {
      return verdict(GlobalRisk::runs_code, "reaches " + std::string(part) +
                                                ", through which any object of the program can be reached");
    }
    for (const Rule& r : kDenied) {
      if (r.name.empty() && r.module.find('.') == std::string_view::npos && part == r.module) {
        return verdict(GlobalRisk::runs_code, "reaches the module " + std::string(part) +
                                                  " through an attribute, which " + std::string(r.reason));
      }
    }
    start = dot + 1;
  }
  return std::nullopt;
}

}  // namespace

GlobalVerdict classify_global(std::string_view module, std::string_view name) {
  for (const Rule& r : kDenied) {
    if (!under(module, r.module)) continue;
    if (r.name.empty() || name == r.name ||
        (name.starts_with(r.name) && name.size() > r.name.size() && name[r.name.size()] == '.')) {
      return verdict(GlobalRisk::runs_code, r.reason);
    }
  }
  if (one_of(module, kBuiltinModules)) {
    if (one_of(name, kSafeBuiltins))
      return verdict(GlobalRisk::allowed, "a builtin constructor of plain values");
    const std::string_view head = name.substr(0, name.find('.'));
    if (one_of(head, kDangerousBuiltins)) {
      return verdict(GlobalRisk::runs_code, head == "open" || head == "file" ? "opens a file"
                                            : head.find("attr") != std::string_view::npos || head == "dir"
                                                ? "reaches any attribute of any object"
                                            : head == "__import__" || head == "reload"
                                                ? "imports arbitrary modules"
                                                : "runs or reaches arbitrary code");
    }
    if (const auto dotted = dotted_name(name)) return *dotted;
    return verdict(GlobalRisk::imports, "a builtin outside the constructors tfdebug allows");
  }
  if (const auto dotted = dotted_name(name)) return *dotted;
  for (const Allowed& a : kAllowed) {
    if (module == a.module && name == a.name) return verdict(GlobalRisk::allowed, a.reason);
  }
  if (module == "torch._utils" && name.starts_with("_rebuild_") && identifier(name)) {
    return verdict(GlobalRisk::allowed, "a tensor rebuilder");
  }
  if (module == "torch" && name.ends_with("Storage") && identifier(name)) {
    return verdict(GlobalRisk::allowed, "a storage type");
  }
  if (module == "torch" && one_of(name, kTorchConstants)) return verdict(GlobalRisk::allowed, kTorchValue);
  if (module == "numpy.dtypes" && name.ends_with("DType") && identifier(name)) {
    return verdict(GlobalRisk::allowed, kNumpy);
  }
  // A module keeps its activation by reference (TransformerEncoderLayer's relu): a function of
  // tensors, imported with torch itself.
  if (module == "torch.nn.functional" && identifier(name) && !name.starts_with("_")) {
    return verdict(GlobalRisk::allowed, "a torch.nn.functional function (a module's activation)");
  }
  if (module.starts_with("torch.nn.modules.") && identifier(name)) {
    return verdict(GlobalRisk::full_module, "a torch.nn module class: the file holds a whole module");
  }
  if (under(module, "__main__")) {
    return verdict(GlobalRisk::imports, "a class or function of the script that saved the file");
  }
  return verdict(GlobalRisk::imports, "not on tfdebug's allow-list");
}

bool unpickles_argument(std::string_view module, std::string_view name) {
  if (name == "loads" || name == "_loads") {
    return module == "pickle" || module == "_pickle" || module == "cPickle" || module == "dill" ||
           module == "cloudpickle";
  }
  return module == "torch.storage" && name == "_load_from_bytes";
}

}  // namespace tfdebug::io::detail

namespace tfdebug::io {

std::string printable(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += kDigits[c >> 4];
    out += kDigits[c & 0xF];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence of a code point past U+009F (no C1 controls) is kept.
    const std::size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = n > 0 && i + n <= text.size();
    std::uint32_t cp = n == 2 ? c & 0x1FU : n == 3 ? c & 0x0FU : c & 0x07U;
    for (std::size_t k = 1; ok && k < n; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3FU);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[n] && cp >= 0xA0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      escape(c);
      ++i;
    }
  }
  return out;
}

}  // namespace tfdebug::io
