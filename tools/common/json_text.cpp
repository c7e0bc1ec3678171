// SPDX-License-Identifier: BSD-3-Clause
#include "json_text.h"

namespace rpmem::tools {

std::string json_text(const Json& document) {
    return document.dump(-1, ' ', false, Json::error_handler_t::replace);
}

} // namespace rpmem::tools
