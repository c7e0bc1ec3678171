// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "protocol/byte_reader.h"

namespace rpmem::protocol {

// The fabric provider a client asks for. Values 1 and 2 are PMDK's RPMEM_PROV_LIBFABRIC_VERBS
// and _SOCKETS.
enum class ProviderPreference : std::uint8_t {
    any = 0,
    verbs = 1,
    sockets = 2,
    tcp = 3,
};

// A persistence method: what a client prefers in a request (any = let the target choose) and
// what the target chose in a reply (never any in a successful reply). Values 1 and 2 are
// PMDK's RPMEM_PM_GPSPM and RPMEM_PM_APM.
enum class PersistMethod : std::uint8_t {
    any = 0,
    gpspm = 1,
    apm = 2,
    commit = 3,
};

std::optional<ProviderPreference> provider_preference_from_wire(std::uint8_t value) noexcept;
std::optional<PersistMethod> persist_method_from_wire(std::uint8_t value) noexcept;

// "any", "verbs", "sockets", "tcp" / "any", "gpspm", "apm", "commit".
std::string_view name_of(ProviderPreference provider) noexcept;
std::string_view name_of(PersistMethod method) noexcept;

// The inverse of name_of, for configuration and environment values such as RPMEM_PROVIDER.
std::optional<ProviderPreference> provider_preference_from_name(std::string_view name) noexcept;
std::optional<PersistMethod> persist_method_from_name(std::string_view name) noexcept;

// A u8 field named "provider" / "persist_method"; an unknown value fails the reader.
ProviderPreference read_provider(ByteReader& r);
PersistMethod read_persist_method(ByteReader& r);

} // namespace rpmem::protocol
