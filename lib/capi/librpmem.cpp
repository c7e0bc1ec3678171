// SPDX-License-Identifier: BSD-3-Clause
// librpmem.so.1: PMDK's C API as a thin skin over rpmem::client. Every exported function is
// noexcept in effect: one catch-all turns any exception into EIO (or ENOMEM) and a message.
// Argument rules and errno values follow PMDK's librpmem 1.12 (see librpmem.h).
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#pragma GCC visibility push(default)
#include "capi/librpmem.h"
#pragma GCC visibility pop

#include "capi/failure_action.h"
#include "capi/last_error.h"
#include "capi/sibling_registry.h"
#include "client/replica.h"
#include "client/settings.h"

// The C handle: the replica and nothing else (sticky errors live in the replica).
struct rpmem_pool {
    std::unique_ptr<rpmem::client::Replica> replica;
};

namespace {

using rpmem::Result;
using rpmem::capi::data_path_status;
using rpmem::capi::report;
using rpmem::client::PersistMode;
using rpmem::client::Replica;

// The client settings, read from the environment and the config file on the first
// create/open/remove that finds them valid, not at load time, and kept from then on. A failure
// is not kept: the next call reads them again, so an operator who fixes client.conf need not
// restart the application. The one other global the C ABI needs.
Result<rpmem::client::Settings> settings_once() {
    static std::mutex mutex;
    static std::optional<rpmem::client::Settings> settings;
    const std::lock_guard lock(mutex);
    if (!settings) {
        auto loaded = rpmem::client::load_settings(rpmem::client::process_environment());
        if (!loaded)
            return loaded;
        settings = std::move(*loaded);
    }
    return *settings;
}

// Runs `body`, turning exceptions into a report and `failed`.
template <typename T, typename Body>
T guarded(T failed, Body&& body) {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        report(ENOMEM, "out of memory");
    } catch (const std::exception& exception) {
        report(EIO, fmt::format("internal error: {}", exception.what()));
    } catch (...) {
        report(EIO, "internal error");
    }
    return failed;
}

int status_of(const Result<void>& result) {
    if (result)
        return 0;
    report(result.error());
    return -1;
}

rpmem::PoolAttributes to_attributes(const rpmem_pool_attr& attr) {
    rpmem::PoolAttributes attributes;
    std::memcpy(attributes.signature.data(), attr.signature, sizeof attr.signature);
    attributes.major = attr.major;
    attributes.compat_features = attr.compat_features;
    attributes.incompat_features = attr.incompat_features;
    attributes.ro_compat_features = attr.ro_compat_features;
    std::memcpy(attributes.poolset_uuid.data(), attr.poolset_uuid, sizeof attr.poolset_uuid);
    std::memcpy(attributes.uuid.data(), attr.uuid, sizeof attr.uuid);
    std::memcpy(attributes.next_uuid.data(), attr.next_uuid, sizeof attr.next_uuid);
    std::memcpy(attributes.prev_uuid.data(), attr.prev_uuid, sizeof attr.prev_uuid);
    std::memcpy(attributes.user_flags.data(), attr.user_flags, sizeof attr.user_flags);
    return attributes;
}

rpmem_pool_attr to_c(const rpmem::PoolAttributes& attributes) {
    rpmem_pool_attr attr{};
    std::memcpy(attr.signature, attributes.signature.data(), sizeof attr.signature);
    attr.major = attributes.major;
    attr.compat_features = attributes.compat_features;
    attr.incompat_features = attributes.incompat_features;
    attr.ro_compat_features = attributes.ro_compat_features;
    std::memcpy(attr.poolset_uuid, attributes.poolset_uuid.data(), sizeof attr.poolset_uuid);
    std::memcpy(attr.uuid, attributes.uuid.data(), sizeof attr.uuid);
    std::memcpy(attr.next_uuid, attributes.next_uuid.data(), sizeof attr.next_uuid);
    std::memcpy(attr.prev_uuid, attributes.prev_uuid.data(), sizeof attr.prev_uuid);
    std::memcpy(attr.user_flags, attributes.user_flags.data(), sizeof attr.user_flags);
    return attr;
}

// The checks PMDK made before contacting anything; returns the parsed target.
std::optional<rpmem::Target> check_open_arguments(const char* step, const char* target,
                                                  const char* pool_set_name, void* pool_addr,
                                                  size_t pool_size, const unsigned* nlanes) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    std::string problem;
    if (target == nullptr)
        problem = "target is NULL";
    else if (pool_set_name == nullptr || *pool_set_name == '\0')
        problem = "pool set name is NULL or empty";
    else if (pool_addr == nullptr || reinterpret_cast<std::uintptr_t>(pool_addr) % page != 0)
        problem = "pool address is NULL or not page aligned";
    else if (pool_size == 0 || pool_size % page != 0)
        problem = "pool size is zero or not a multiple of the page size";
    else if (nlanes == nullptr || *nlanes == 0)
        problem = "number of lanes is NULL or zero";
    if (!problem.empty()) {
        report(EINVAL, fmt::format("{}: {}", step, problem));
        return std::nullopt;
    }
    auto parsed = rpmem::parse_target(target);
    if (!parsed) {
        report(EINVAL, fmt::format("{}: target '{}': {}", step, target, parsed.error().message()));
        return std::nullopt;
    }
    return *parsed;
}

bool check_pool(const char* step, const RPMEMpool* rpp) {
    if (rpp != nullptr && rpp->replica)
        return true;
    report(EINVAL, fmt::format("{}: pool handle is NULL", step));
    return false;
}

// The persist mode `flags` ask for; EINVAL (naming `step`) for any bit but `relaxed_flag`.
std::optional<rpmem::client::PersistMode> persist_mode(const char* step, unsigned flags,
                                                       unsigned relaxed_flag) {
    if ((flags & ~relaxed_flag) != 0) {
        report(EINVAL, fmt::format("{}: unknown flags {:#x}", step, flags));
        return std::nullopt;
    }
    return (flags & relaxed_flag) != 0 ? rpmem::client::PersistMode::relaxed
                                       : rpmem::client::PersistMode::strict;
}

// rpmem_flush and rpmem_persist: a checked handle, the mode their flags ask for, then `call`
// with it, answered by data_path_status. `caller` is the application's return address, taken
// in the exported function itself.
template <typename Call>
int relaxable_call(const char* step, RPMEMpool* rpp, unsigned flags, unsigned relaxed_flag,
                   const void* caller, Call call) {
    return guarded(-1, [&] {
        if (!check_pool(step, rpp))
            return -1;
        auto mode = persist_mode(step, flags, relaxed_flag);
        if (!mode)
            return -1;
        return data_path_status(call(*rpp->replica, *mode), *rpp->replica, step, caller);
    });
}

// rpmem_create and rpmem_open: checked arguments and settings, then `connect` makes the
// replica from the settings, the target, the pool and its siblings in this process.
template <typename Connect>
RPMEMpool* new_pool(const char* step, const char* target, const char* pool_set_name,
                    void* pool_addr, size_t pool_size, unsigned* nlanes, Connect connect) {
    return guarded<RPMEMpool*>(nullptr, [&]() -> RPMEMpool* {
        auto parsed =
            check_open_arguments(step, target, pool_set_name, pool_addr, pool_size, nlanes);
        if (!parsed)
            return nullptr;
        auto settings = settings_once();
        if (!settings) {
            report(settings.error());
            return nullptr;
        }
        auto replica =
            connect(*settings, *parsed, {static_cast<std::byte*>(pool_addr), pool_size},
                    rpmem::capi::siblings_of(pool_addr, pool_size, settings->min_in_sync_replicas,
                                             settings->fan_out));
        if (!replica) {
            report(replica.error());
            return nullptr;
        }
        return new rpmem_pool{std::move(*replica)};
    });
}

} // namespace

extern "C" {

RPMEMpool* rpmem_create(const char* target, const char* pool_set_name, void* pool_addr,
                        size_t pool_size, unsigned* nlanes,
                        const struct rpmem_pool_attr* create_attr) {
    return new_pool(
        "rpmem_create", target, pool_set_name, pool_addr, pool_size, nlanes,
        [&](const auto& settings, const auto& where, std::span<std::byte> pool, auto siblings) {
            std::optional<rpmem::PoolAttributes> attributes;
            if (create_attr != nullptr)
                attributes = to_attributes(*create_attr);
            return Replica::create(settings, where, pool_set_name, pool, *nlanes,
                                   attributes ? &*attributes : nullptr, std::move(siblings));
        });
}

RPMEMpool* rpmem_open(const char* target, const char* pool_set_name, void* pool_addr,
                      size_t pool_size, unsigned* nlanes, struct rpmem_pool_attr* open_attr) {
    return new_pool(
        "rpmem_open", target, pool_set_name, pool_addr, pool_size, nlanes,
        [&](const auto& settings, const auto& where, std::span<std::byte> pool, auto siblings) {
            rpmem::PoolAttributes attributes;
            auto replica = Replica::open(settings, where, pool_set_name, pool, *nlanes, &attributes,
                                         true, std::move(siblings));
            if (replica && open_attr != nullptr)
                *open_attr = to_c(attributes);
            return replica;
        });
}

int rpmem_set_attr(RPMEMpool* rpp, const struct rpmem_pool_attr* attr) {
    return guarded(-1, [&] {
        if (!check_pool("rpmem_set_attr", rpp))
            return -1;
        rpmem::PoolAttributes attributes;
        if (attr != nullptr)
            attributes = to_attributes(*attr);
        return status_of(rpp->replica->set_attributes(attributes));
    });
}

int rpmem_close(RPMEMpool* rpp) {
    return guarded(-1, [&] {
        if (!check_pool("rpmem_close", rpp))
            return -1;
        // The handle is freed whatever close() reports.
        std::unique_ptr<rpmem_pool> owned(rpp);
        return status_of(owned->replica->close());
    });
}

int rpmem_flush(RPMEMpool* rpp, size_t offset, size_t length, unsigned lane, unsigned flags) {
    return relaxable_call("rpmem_flush", rpp, flags, RPMEM_FLUSH_RELAXED,
                          __builtin_return_address(0), [&](Replica& replica, PersistMode mode) {
                              return replica.flush(offset, length, lane, mode);
                          });
}

int rpmem_drain(RPMEMpool* rpp, unsigned lane, unsigned flags) {
    const void* caller = __builtin_return_address(0);
    return guarded(-1, [&] {
        if (!check_pool("rpmem_drain", rpp))
            return -1;
        if ((flags & ~RPMEM_DRAIN_REPLICATED) != 0) {
            report(EINVAL, fmt::format("rpmem_drain: flags must be 0 or RPMEM_DRAIN_REPLICATED, "
                                       "got {:#x}",
                                       flags));
            return -1;
        }
        Result<void> drained = rpp->replica->drain(lane);
        if (drained && (flags & RPMEM_DRAIN_REPLICATED) != 0)
            drained = rpp->replica->wait_replicated(rpp->replica->settings().timeout);
        return data_path_status(std::move(drained), *rpp->replica, "rpmem_drain", caller);
    });
}

int rpmem_persist(RPMEMpool* rpp, size_t offset, size_t length, unsigned lane, unsigned flags) {
    return relaxable_call("rpmem_persist", rpp, flags, RPMEM_PERSIST_RELAXED,
                          __builtin_return_address(0), [&](Replica& replica, PersistMode mode) {
                              return replica.persist(offset, length, lane, mode);
                          });
}

int rpmem_deep_persist(RPMEMpool* rpp, size_t offset, size_t length, unsigned lane) {
    const void* caller = __builtin_return_address(0);
    return guarded(-1, [&] {
        if (!check_pool("rpmem_deep_persist", rpp))
            return -1;
        return data_path_status(rpp->replica->deep_persist(offset, length, lane), *rpp->replica,
                                "rpmem_deep_persist", caller);
    });
}

int rpmem_read(RPMEMpool* rpp, void* buff, size_t offset, size_t length, unsigned lane) {
    return guarded(-1, [&] {
        if (!check_pool("rpmem_read", rpp))
            return -1;
        if (buff == nullptr && length != 0) {
            report(EINVAL, "rpmem_read: buffer is NULL");
            return -1;
        }
        return status_of(rpp->replica->read({static_cast<std::byte*>(buff), length}, offset, lane));
    });
}

int rpmem_remove(const char* target, const char* pool_set_name, int flags) {
    return guarded(-1, [&] {
        if ((flags & ~(RPMEM_REMOVE_FORCE | RPMEM_REMOVE_POOL_SET)) != 0) {
            report(EINVAL, fmt::format("rpmem_remove: unknown flags {:#x}", flags));
            return -1;
        }
        if (target == nullptr || pool_set_name == nullptr || *pool_set_name == '\0') {
            report(EINVAL, "rpmem_remove: target or pool set name is NULL or empty");
            return -1;
        }
        auto parsed = rpmem::parse_target(target);
        if (!parsed) {
            report(EINVAL,
                   fmt::format("rpmem_remove: target '{}': {}", target, parsed.error().message()));
            return -1;
        }
        auto settings = settings_once();
        if (!settings) {
            report(settings.error());
            return -1;
        }
        rpmem::client::RemoveOptions options{
            .force = (flags & RPMEM_REMOVE_FORCE) != 0,
            .remove_set_file = (flags & RPMEM_REMOVE_POOL_SET) != 0,
        };
        return status_of(rpmem::client::remove(*settings, *parsed, pool_set_name, options));
    });
}

const char* rpmem_check_version(unsigned major_required, unsigned minor_required) {
    // The failure value is a sentinel, not last_message(): the report made on an exception may
    // move the message's buffer.
    static const char failed = 0;
    const char* checked = guarded<const char*>(&failed, [&]() -> const char* {
        if (major_required != RPMEM_MAJOR_VERSION) {
            report(EINVAL, fmt::format("librpmem major version mismatch (need {}, found {})",
                                       major_required, RPMEM_MAJOR_VERSION));
            return rpmem::capi::last_message();
        }
        if (minor_required > RPMEM_MINOR_VERSION) {
            report(EINVAL, fmt::format("librpmem minor version mismatch (need {}, found {})",
                                       minor_required, RPMEM_MINOR_VERSION));
            return rpmem::capi::last_message();
        }
        return nullptr;
    });
    return checked == &failed ? rpmem::capi::last_message() : checked;
}

const char* rpmem_errormsg(void) {
    return rpmem::capi::last_message();
}

} // extern "C"
