// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>

#include <rdma/fi_domain.h>

#include "base/error.h"
#include "fabric/domain.h"
#include "fabric/fid_ptr.h"

namespace rpmem::fabric {

// What a peer needs to reach a registered region, as the owner of the region hands it over
// (the control channel carries it): the base address for RMA (the region's virtual address
// when the provider uses FI_MR_VIRT_ADDR, 0 when it addresses by offset), the key and the
// length. Operations name a byte by its offset from the start; remote_address() adds the base.
struct RemoteRegion {
    std::uint64_t address = 0;
    std::uint64_t key = 0;
    std::uint64_t length = 0;

    std::uint64_t remote_address(std::uint64_t offset) const noexcept { return address + offset; }
    bool contains(std::uint64_t offset, std::uint64_t size) const noexcept {
        return offset <= length && size <= length - offset;
    }
};

// Access rights of a registration, libfabric's own bits by purpose.
namespace access {
inline constexpr std::uint64_t kWriteSource = FI_WRITE;        // local source of RMA writes
inline constexpr std::uint64_t kReadTarget = FI_READ;          // local target of RMA reads
inline constexpr std::uint64_t kSendSource = FI_SEND;          // local buffer of sends
inline constexpr std::uint64_t kReceiveTarget = FI_RECV;       // local buffer of receives
inline constexpr std::uint64_t kRemoteRead = FI_REMOTE_READ;   // peers may read it
inline constexpr std::uint64_t kRemoteWrite = FI_REMOTE_WRITE; // peers may write it
} // namespace access

// Owner of one memory registration (fi_mr) of a caller-owned buffer, which must stay mapped
// while registered. The key is the provider's (FI_MR_PROV_KEY) or, when the provider lets the
// application choose, a random 64-bit value: a peer of another session in the same domain
// cannot guess it. Its Domain must outlive it. Movable; immutable after creation, so
// thread-safe.
class MemoryRegion {
public:
    static Result<MemoryRegion> register_memory(const Domain& domain, void* address,
                                                std::size_t length, std::uint64_t access);

    std::byte* data() const noexcept { return data_; }
    std::size_t length() const noexcept { return length_; }
    std::uint64_t key() const noexcept { return key_; }
    // The local descriptor to pass with operations (needed under FI_MR_LOCAL, harmless
    // otherwise).
    void* descriptor() const noexcept { return descriptor_; }
    // What to hand to a peer so it can reach this region.
    RemoteRegion remote() const noexcept;

    bool contains(std::size_t offset, std::size_t size) const noexcept {
        return offset <= length_ && size <= length_ - offset;
    }

private:
    MemoryRegion(FidPtr<fid_mr> mr, std::byte* data, std::size_t length, bool virt_addr);

    FidPtr<fid_mr> mr_;
    std::byte* data_;
    std::size_t length_;
    std::uint64_t key_;
    void* descriptor_;
    bool virt_addr_;
};

} // namespace rpmem::fabric
