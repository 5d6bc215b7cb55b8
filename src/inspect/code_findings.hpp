// The pickle scanner's verdicts as findings of `inspect` (docs/inspect.md, rule pickle_code).
// Private to tfdebug::inspect.
#pragma once

#include <vector>

#include "tfdebug/io/pickle_scan.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::inspect::detail {

// One finding per global that is not allowed, in each pickle of `scan` (nested ones too):
// pickle_code (error) for a global that runs code under torch.load, pickle_import (warning) for
// one tfdebug does not know, full_module (info) for a torch.nn module class.
void code_findings(const io::FileScan& scan, std::vector<Finding>& findings);

}  // namespace tfdebug::inspect::detail
