// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/memory_region.h"

#include <cerrno>
#include <random>

#include <fmt/format.h>
#include <rdma/fi_errno.h>
#include <sys/random.h>

#include "fabric/fabric_error.h"

namespace rpmem::fabric {

namespace {

constexpr int kKeyAttempts = 8;

std::uint64_t random_key(std::size_t key_size) {
    std::uint64_t key = 0;
    if (getrandom(&key, sizeof key, 0) != static_cast<ssize_t>(sizeof key))
        key = (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
    if (key_size > 0 && key_size < sizeof key)
        key &= (std::uint64_t{1} << (8 * key_size)) - 1;
    return key;
}

} // namespace

MemoryRegion::MemoryRegion(FidPtr<fid_mr> mr, std::byte* data, std::size_t length, bool virt_addr)
    : mr_(std::move(mr))
    , data_(data)
    , length_(length)
    , key_(fi_mr_key(mr_.get()))
    , descriptor_(fi_mr_desc(mr_.get()))
    , virt_addr_(virt_addr) {}

Result<MemoryRegion> MemoryRegion::register_memory(const Domain& domain, void* address,
                                                   std::size_t length, std::uint64_t access) {
    const Capabilities& caps = domain.capabilities();
    FidPtr<fid_mr> mr;
    int ret = 0;
    for (int attempt = 0; attempt < kKeyAttempts; ++attempt) {
        const std::uint64_t requested = caps.mr_prov_key ? 0 : random_key(caps.mr_key_size);
        ret = fi_mr_reg(domain.get(), address, length, access, 0, requested, 0, mr.out(), nullptr);
        if (ret != -FI_ENOKEY)
            break; // a chosen key already in use is the only reason to try again
    }
    if (ret != 0)
        return fail(fabric_error(ret, fmt::format("fi_mr_reg of {} bytes", length)));
    return MemoryRegion(std::move(mr), static_cast<std::byte*>(address), length, caps.mr_virt_addr);
}

RemoteRegion MemoryRegion::remote() const noexcept {
    return RemoteRegion{virt_addr_ ? reinterpret_cast<std::uint64_t>(data_) : 0, key_, length_};
}

} // namespace rpmem::fabric
