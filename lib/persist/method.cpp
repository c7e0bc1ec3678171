// SPDX-License-Identifier: BSD-3-Clause
#include "persist/method.h"

namespace rpmem::persist {

std::string_view to_string(Method method) noexcept {
    switch (method) {
    case Method::apm:
        return "apm";
    case Method::gpspm:
        return "gpspm";
    case Method::commit:
        return "commit";
    }
    return "unknown";
}

std::optional<Method> parse_method(std::string_view name) noexcept {
    for (Method method : {Method::apm, Method::gpspm, Method::commit})
        if (name == to_string(method))
            return method;
    return std::nullopt;
}

} // namespace rpmem::persist
