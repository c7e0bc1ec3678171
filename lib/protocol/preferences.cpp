// SPDX-License-Identifier: BSD-3-Clause
#include "protocol/preferences.h"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace rpmem::protocol {

namespace {

// Indexed by the wire value.
constexpr std::array<std::string_view, 4> kProviderNames{"any", "verbs", "sockets", "tcp"};
constexpr std::array<std::string_view, 4> kPersistMethodNames{"any", "gpspm", "apm", "commit"};

template <typename Enum, std::size_t N>
std::optional<Enum> from_name(const std::array<std::string_view, N>& names, std::string_view name) {
    for (std::size_t i = 0; i < N; ++i) {
        if (names[i] == name)
            return static_cast<Enum>(i);
    }
    return std::nullopt;
}

} // namespace

std::optional<ProviderPreference> provider_preference_from_wire(std::uint8_t value) noexcept {
    if (value < kProviderNames.size())
        return static_cast<ProviderPreference>(value);
    return std::nullopt;
}

std::optional<PersistMethod> persist_method_from_wire(std::uint8_t value) noexcept {
    if (value < kPersistMethodNames.size())
        return static_cast<PersistMethod>(value);
    return std::nullopt;
}

std::string_view name_of(ProviderPreference provider) noexcept {
    auto index = static_cast<std::size_t>(provider);
    return index < kProviderNames.size() ? kProviderNames[index] : "unknown";
}

std::string_view name_of(PersistMethod method) noexcept {
    auto index = static_cast<std::size_t>(method);
    return index < kPersistMethodNames.size() ? kPersistMethodNames[index] : "unknown";
}

std::optional<ProviderPreference> provider_preference_from_name(std::string_view name) noexcept {
    return from_name<ProviderPreference>(kProviderNames, name);
}

std::optional<PersistMethod> persist_method_from_name(std::string_view name) noexcept {
    return from_name<PersistMethod>(kPersistMethodNames, name);
}

ProviderPreference read_provider(ByteReader& r) {
    auto raw = r.u8("provider");
    auto provider = provider_preference_from_wire(raw);
    r.require(provider.has_value(), "provider", fmt::format("unknown provider {}", raw));
    return provider.value_or(ProviderPreference::any);
}

PersistMethod read_persist_method(ByteReader& r) {
    auto raw = r.u8("persist_method");
    auto method = persist_method_from_wire(raw);
    r.require(method.has_value(), "persist_method",
              fmt::format("unknown persistence method {}", raw));
    return method.value_or(PersistMethod::any);
}

} // namespace rpmem::protocol
