// SPDX-License-Identifier: BSD-3-Clause
#include "progress_display.h"

#include <memory>

namespace rpmem::tools {

ProgressDisplay ProgressDisplay::on(std::ostream& out, bool terminal, std::string prefix) {
    if (terminal)
        return {std::chrono::milliseconds(200),
                [&out](const client::ProgressMeter&, const std::string& line, bool final) {
                    // Carriage return, the line, erase to the end of the line.
                    out << '\r' << line << "\033[K" << (final ? "\n" : "") << std::flush;
                }};
    // The final line only when progress lines came before it.
    auto shown = std::make_shared<bool>(false);
    return {std::chrono::seconds(10),
            [&out, prefix = std::move(prefix), shown](const client::ProgressMeter&,
                                                      const std::string& line, bool final) {
                if (final && !*shown)
                    return;
                *shown = true;
                out << prefix << line << "\n" << std::flush;
            }};
}

} // namespace rpmem::tools
