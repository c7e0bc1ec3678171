// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/fabric_library.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <dlfcn.h>
#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include "fabric/host_process_guard.h"
#include "fabric/logger.h"

namespace rpmem::fabric {

namespace {

constexpr const char* kLibraryName = "libfabric.so.1";

// The changes a load made that the guard put back, for whoever wonders where they went.
void report_restored(const sigset_t& restored, std::string_view what) {
    std::string names;
    for (int signal = 1; signal < NSIG; ++signal) {
        if (sigismember(&restored, signal) != 1)
            continue;
        if (!names.empty())
            names += ", ";
        const char* abbrev = sigabbrev_np(signal);
        names += abbrev != nullptr ? fmt::format("SIG{}", abbrev) : std::to_string(signal);
    }
    if (!names.empty())
        logger().debug("{} changed the dispositions of {}; restored them", what, names);
}

template <typename Function>
Result<Function> resolve(void* handle, const char* name) {
    dlerror();
    void* symbol = dlsym(handle, name);
    if (symbol == nullptr)
        return fail(ELIBBAD, fmt::format("{}: no symbol {}", kLibraryName, name),
                    ErrorSource::system, ELIBBAD);
    return reinterpret_cast<Function>(symbol);
}

// Published after a successful load so that loaded() needs no lock.
std::atomic<const FabricLibrary*> loaded_library{nullptr};

} // namespace

Result<const FabricLibrary*> FabricLibrary::open() {
    HostProcessGuard guard;
    void* handle = dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
    report_restored(guard.restore(), fmt::format("loading {}", kLibraryName));
    if (handle == nullptr) {
        const char* why = dlerror();
        return fail(ELIBACC, fmt::format("loading {}: {}", kLibraryName, why ? why : "failed"),
                    ErrorSource::system, ELIBACC);
    }
    // Never deleted, like the handle is never closed: fi_info lists freed by static destructors
    // at exit still find their fi_freeinfo.
    auto* library = new FabricLibrary();
    const auto bind = [&](auto& function, const char* name) -> Result<void> {
        auto symbol = resolve<std::remove_reference_t<decltype(function)>>(handle, name);
        if (!symbol)
            return fail(symbol.error());
        function = *symbol;
        return {};
    };
    for (auto result :
         {bind(library->getinfo_, "fi_getinfo"), bind(library->fabric_, "fi_fabric"),
          bind(library->dupinfo_, "fi_dupinfo"), bind(library->freeinfo_, "fi_freeinfo"),
          bind(library->strerror_, "fi_strerror")}) {
        if (!result) {
            delete library;
            return fail(result.error());
        }
    }
    return library;
}

Result<const FabricLibrary*> FabricLibrary::load() {
    // A process-wide cache is the point here: the library is loaded once and never unloaded.
    static const Result<const FabricLibrary*> library = open();
    if (library)
        loaded_library.store(*library, std::memory_order_release);
    return library;
}

const FabricLibrary* FabricLibrary::loaded() noexcept {
    return loaded_library.load(std::memory_order_acquire);
}

template <typename Call>
int FabricLibrary::first_call_guarded(Call&& call) const {
    if (providers_loaded_.load(std::memory_order_acquire))
        return call();
    const std::lock_guard lock(first_call_mutex_);
    if (providers_loaded_.load(std::memory_order_relaxed))
        return call();
    HostProcessGuard guard;
    const int ret = call();
    report_restored(guard.restore(), "loading libfabric's providers");
    providers_loaded_.store(true, std::memory_order_release);
    return ret;
}

int FabricLibrary::getinfo(std::uint32_t version, const char* node, const char* service,
                           std::uint64_t flags, const fi_info* hints, fi_info** info) const {
    return first_call_guarded([&] { return getinfo_(version, node, service, flags, hints, info); });
}

int FabricLibrary::open_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) const {
    return first_call_guarded([&] { return fabric_(attr, fabric, context); });
}

const char* fabric_strerror(int code) noexcept {
    if (const FabricLibrary* library = FabricLibrary::loaded())
        return library->strerror(code);
    if (code < FI_ERRNO_OFFSET)
        return ::strerror(code);
    return "libfabric error (libfabric not loaded)";
}

} // namespace rpmem::fabric
