#include "code_findings.hpp"

namespace tfdebug::inspect::detail {
namespace {

void pickle_findings(const io::PickleScan& scan, std::vector<Finding>& findings) {
  for (const io::PickleGlobal& g : scan.globals) {
    if (g.risk == io::GlobalRisk::allowed) continue;
    Finding f;
    f.op = scan.origin;  // shown where a tensor's name would be: the file and its pickle
    f.message = io::global_message(g);
    f.evidence = {{"global", g.full_name()},
                  {"called", g.called ? 1 : 0},
                  {"offset", static_cast<std::int64_t>(g.offset)},
                  {"reason", g.reason}};
    switch (g.risk) {
      case io::GlobalRisk::runs_code:
        f.rule = "pickle_code";
        f.severity = Severity::error;
        f.suggestion =
            "do not open it with torch.load, pickle.load or numpy.load(allow_pickle=True) (tfdebug ran "
            "nothing); ask for safetensors, or load a copy you trust with torch.load(weights_only=True)";
        break;
      case io::GlobalRisk::imports:
        f.rule = "pickle_import";
        f.severity = Severity::warning;
        f.suggestion =
            "torch.load needs that module installed and runs its code: load it only if you trust "
            "both; torch.load(weights_only=True) refuses it";
        break;
      case io::GlobalRisk::full_module:
        f.rule = "full_module";
        f.severity = Severity::info;
        f.suggestion = "save model.state_dict() instead: a full module ties the file to its source code";
        break;
      case io::GlobalRisk::allowed:
        break;
    }
    findings.push_back(std::move(f));
  }
  for (const io::PickleScan& n : scan.nested) pickle_findings(n, findings);
}

}  // namespace

void code_findings(const io::FileScan& scan, std::vector<Finding>& findings) {
  for (const io::PickleScan& p : scan.pickles) pickle_findings(p, findings);
}

}  // namespace tfdebug::inspect::detail
