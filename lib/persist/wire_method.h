// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <optional>

#include "persist/method.h"
#include "protocol/preferences.h"

namespace rpmem::persist {

// A method as the control protocol carries it. The wire adds "any" (the target chooses),
// which stands for no preference.
protocol::PersistMethod to_wire(Method method) noexcept;
protocol::PersistMethod to_wire(std::optional<Method> preference) noexcept;

// The method a wire value names; nullopt for "any".
std::optional<Method> from_wire(protocol::PersistMethod method) noexcept;

} // namespace rpmem::persist
