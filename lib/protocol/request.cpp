// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/request.h"

namespace rpmem::protocol {

MessageType type_of(const Request& request) noexcept {
    return std::visit([](const auto& message) { return message.kType; }, request);
}

} // namespace rpmem::protocol
