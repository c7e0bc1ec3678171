// SPDX-License-Identifier: BSD-3-Clause
#include "persist/wire_method.h"

namespace rpmem::persist {

protocol::PersistMethod to_wire(Method method) noexcept {
    switch (method) {
    case Method::apm:
        return protocol::PersistMethod::apm;
    case Method::gpspm:
        return protocol::PersistMethod::gpspm;
    case Method::commit:
        return protocol::PersistMethod::commit;
    }
    return protocol::PersistMethod::any;
}

protocol::PersistMethod to_wire(std::optional<Method> preference) noexcept {
    return preference ? to_wire(*preference) : protocol::PersistMethod::any;
}

std::optional<Method> from_wire(protocol::PersistMethod method) noexcept {
    switch (method) {
    case protocol::PersistMethod::apm:
        return Method::apm;
    case protocol::PersistMethod::gpspm:
        return Method::gpspm;
    case protocol::PersistMethod::commit:
        return Method::commit;
    case protocol::PersistMethod::any:
        break;
    }
    return std::nullopt;
}

} // namespace rpmem::persist
