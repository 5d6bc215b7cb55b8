// Pickle safety: which globals a pickle references and calls, read statically (nothing is built,
// imported or run), and whether `torch.load` (weights_only=False) would run code opening it.
//
//   tfdebug::io::PickleScan scan = tfdebug::io::scan_pickle("model.pkl", bytes);
//   for (const tfdebug::io::PickleGlobal& g : scan.globals)
//     if (g.risk == tfdebug::io::GlobalRisk::runs_code) std::puts(global_message(g).c_str());
//
//   for (const tfdebug::io::FileScan& f : tfdebug::io::scan_paths({"checkpoints/"}))
//     ...   // every .pt/.pth/.bin/.ckpt/.pkl/.pickle/.npy/.npz/.zip under the folder
//
// The scanner walks the opcodes of protocols 0-5 once, keeping for each stack slot only what it
// is (a string, a global, the result of calling a global, something else): linear time, memory
// at most a small multiple of the input. docs/scan.md lists what is allowed and what is flagged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tfdebug::io {

// How far a global is from what a checkpoint legitimately holds (docs/scan.md, "What is flagged").
enum class GlobalRisk : std::uint8_t {
  allowed,      // a tensor rebuilder, storage, dtype, OrderedDict, numpy array parts, ...
  full_module,  // a torch.nn.modules class: the file is a whole pickled module (info)
  imports,      // not on the allow-list: torch.load imports its module and may call it (warning)
  runs_code     // runs code or touches the system when torch.load opens the file (error)
};
// "allowed", "full_module", "imports", "runs_code".
const char* risk_name(GlobalRisk risk) noexcept;

struct PickleGlobal {
  std::string module;      // "posix"; "copyreg extension" for EXT1/2/4 codes
  std::string name;        // "system"; the code for an extension
  bool called = false;     // REDUCE, NEWOBJ, NEWOBJ_EX, INST or OBJ call it (or the result of calling it)
  bool modified = false;   // BUILD sets state on the global itself (setattr on a class or function)
  std::size_t offset = 0;  // pickle offset of the first opcode that names it
  std::int64_t references = 0;  // opcodes that name it
  GlobalRisk risk = GlobalRisk::imports;
  std::string reason;  // why, in a few words: "runs a shell command", "a tensor rebuilder"

  std::string full_name() const { return module + "." + name; }
};

struct PickleScan {
  std::string origin;                 // "model.pt:archive/data.pkl", "x.pkl > pickle.loads at 41"
  std::vector<PickleGlobal> globals;  // every distinct global, in order of first reference
  // Pickles a call unpickles from one of its byte-string arguments (pickle.loads, _pickle.loads,
  // cPickle.loads, torch.storage._load_from_bytes): scanned too, at most 4 levels deep.
  std::vector<PickleScan> nested;
  std::string problem;  // non-empty: the pickle is malformed here; globals hold what came before
  std::size_t end = 0;  // offset just past STOP (or where the scan stopped)

  // The worst risk of its globals and of the nested pickles'.
  GlobalRisk worst() const noexcept;
};

// One pickle, from its first opcode to STOP. Never throws for bad input: a malformed pickle sets
// `problem` (the globals before it are still reported, as Python would have run them).
PickleScan scan_pickle(std::string origin, std::span<const std::byte> bytes);

// The one-line verdict of a global that is not allowed:
//   runs_code: "this file runs code when `torch.load` opens it: calls posix.system (runs a shell command)"
//   imports:   "torch.load imports __main__ and calls __main__.Net, which tfdebug does not know"
//   full_module: "a full module: torch.nn.modules.linear.Linear"
std::string global_message(const PickleGlobal& global);

// `text` with control characters, backslashes and bytes that are not UTF-8 written as \xNN: how
// the scanner stores names from a hostile pickle or archive, and how to print a path safely.
std::string printable(std::string_view text);

// What one file holds. Unreadable input sets `error` (one line naming the file).
struct FileScan {
  std::string path;
  // "torch zip" (torch.save), "zip", "npz", "npy", "legacy torch" (torch.save before 1.6),
  // "pickle", or "none" (a file that holds no pickle: a plain .npy, safetensors, ...)
  std::string container;
  std::vector<PickleScan> pickles;
  std::string error;  // unreadable: the reason, naming the file
  std::string note;   // a folder entry that was not followed: "a symlink loop", ...

  GlobalRisk worst() const noexcept;
};

// One file, recognised by its bytes: a ZIP's *.pkl / *.pickle / *.npy members (a torch.save zip's
// data.pkl; never its storages), an .npy's object-array pickle, a legacy torch.save's pickles, a
// plain pickle (and the pickles that follow it, as joblib writes them).
FileScan scan_file(const std::string& path);

// Files and folders: a folder is walked recursively for files named *.pt, *.pth, *.bin, *.ckpt,
// *.pkl, *.pickle, *.joblib, *.npy, *.npz, *.zip. Symbolic links are not followed out of the
// folder, and a link back into one of its own parents (or a link loop) is reported, not followed.
std::vector<FileScan> scan_paths(const std::vector<std::string>& paths);

}  // namespace tfdebug::io
