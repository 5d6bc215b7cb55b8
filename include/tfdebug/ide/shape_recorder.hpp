// ShapeRecorder: a Session sink that keeps the dtype and shape of every tensor a run observed,
// grouped by module path — per module, each op's floating-point inputs and output (per phase),
// and the module's parameters — and writes them as JSON when the run ends, for editors (hovers
// over a module or a tensor name) and scripts. The schema is in docs/debugger.md ("Shapes by
// module").
//
//   tfdebug::Session session(config);
//   session.add_sink(std::make_shared<tfdebug::ide::ShapeRecorder>("run/shapes.json"));
//   ... train ...
//   session.finish();                      // writes run/shapes.json
//
// It reads every observation on the pause channel (Sink::pause_at, never asking to stop), so it
// sees what the producer observed: in Tier::diagnose every op, in watch the model's layers,
// activations, parameters and gradients. An op's inputs are those its producer kept (the LibTorch
// adapter: the floating-point ones; the probe: the views passed to observe). The same op of a
// module with other shapes (a second matmul, a shorter batch) is another entry; past
// kMaxEntries entries in all, new ones are counted as dropped instead of kept.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/phase.hpp"
#include "tfdebug/session/sink.hpp"

namespace tfdebug::ide {

struct TensorShape {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  bool operator==(const TensorShape&) const = default;
};

// One op of a module with one set of shapes.
struct OpShapes {
  std::string op;  // "aten::log"
  Phase phase = Phase::forward;
  std::vector<TensorShape> inputs;
  TensorShape output;
  std::int64_t calls = 0;  // observations with these shapes
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
};

struct ModuleShapes {
  std::string module;                             // "" for the top level
  std::vector<OpShapes> ops;                      // in the order first seen
  std::map<std::string, TensorShape> parameters;  // by full name ("blocks.1.mlp.fc1.weight")
};

class ShapeRecorder final : public Sink {
 public:
  static constexpr std::size_t kMaxEntries = 100000;

  // `path`: where on_run_end writes the JSON ("" writes nothing; json() still answers).
  explicit ShapeRecorder(std::string path = {});

  // What was recorded so far, modules sorted by path.
  std::vector<ModuleShapes> modules() const;
  std::int64_t dropped() const;
  // The export's text (docs/debugger.md: "Shapes by module").
  std::string json() const;
  // Writes json() to `path` (through a temporary file and a rename); throws tfdebug::Error
  // naming the file when it cannot.
  void write(const std::string& path) const;

  // Sink.
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding& finding) override { (void)finding; }
  void on_run_end(const RunSummary& summary) override;
  bool wants_pauses() const noexcept override { return true; }
  bool pause_at(const Observation& observation, const Stats& stats, std::span<const Finding> raised) override;

 private:
  struct Module {
    std::vector<OpShapes> ops;
    std::unordered_map<std::string, std::size_t> index;  // signature -> position in ops
    std::map<std::string, TensorShape> parameters;
  };

  std::string path_;
  mutable std::mutex mutex_;
  std::map<std::string, Module, std::less<>> modules_;
  std::size_t entries_ = 0;
  std::int64_t dropped_ = 0;
  std::int64_t first_step_ = -1;
  std::int64_t last_step_ = -1;
};

}  // namespace tfdebug::ide
