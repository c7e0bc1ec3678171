// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <ostream>
#include <string_view>

#include "result_report.h"

namespace rpmem::bench {

// Whether `path` names a figure rpmem-bench-plot draws: FILE.svg or FILE.png.
bool is_plot_path(std::string_view path) noexcept;

// Draws the JSON report at `report` (as write_report writes it) into `plot` with the script
// rpmem-bench-plot (python3-matplotlib): the one beside this executable in the build tree or the
// installation, else the first on PATH. Returns the command's exit status: kExitOk when drawn,
// kExitFailure with the reason on `err` ("COMMAND: plotting ...") otherwise.
int plot_report(const std::filesystem::path& report, const std::filesystem::path& plot,
                std::string_view command, std::ostream& err);

// The same for a report in memory: its JSON goes to a scratch file first, whatever format and
// destination the report itself was written in (--format csv, standard output).
int plot_report(const Report& report, const std::filesystem::path& plot, std::string_view command,
                std::ostream& err);

} // namespace rpmem::bench
