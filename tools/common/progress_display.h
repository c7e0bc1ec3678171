// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "client/progress_meter.h"

namespace rpmem::tools {

// How a tool shows the progress of long work (client::ProgressMeter): on a terminal, one line
// rewritten in place a few times a second and kept at the end; otherwise (a pipe, a file, a
// journal) a plain line now and then, and none at all for work that ends before the first.
struct ProgressDisplay {
    client::ProgressMeter::Clock::duration interval;
    client::ProgressMeter::Show show;

    // For `out`, a terminal or not as `terminal` says; plain lines start with `prefix`.
    static ProgressDisplay on(std::ostream& out, bool terminal, std::string prefix);
};

} // namespace rpmem::tools
