// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <utility>

#include <rdma/fabric.h>

namespace rpmem::fabric {

// Closes a libfabric object; a provider that refuses is logged, never thrown or aborted on.
void close_fid(fid_t fid) noexcept;

// Sole owner of one libfabric object (fid_fabric, fid_domain, fid_ep, fid_cq, ...), closed with
// fi_close when the owner goes. libfabric refuses to close a parent that still has children,
// so owners of parents must be declared before owners of their children. Movable, not
// copyable; not thread-safe (like unique_ptr).
template <typename T>
class FidPtr {
public:
    FidPtr() noexcept = default;
    explicit FidPtr(T* object) noexcept
        : object_(object) {}
    FidPtr(FidPtr&& other) noexcept
        : object_(std::exchange(other.object_, nullptr)) {}
    FidPtr& operator=(FidPtr&& other) noexcept {
        if (this != &other) {
            reset();
            object_ = std::exchange(other.object_, nullptr);
        }
        return *this;
    }
    FidPtr(const FidPtr&) = delete;
    FidPtr& operator=(const FidPtr&) = delete;
    ~FidPtr() { reset(); }

    T* get() const noexcept { return object_; }
    T* operator->() const noexcept { return object_; }
    explicit operator bool() const noexcept { return object_ != nullptr; }

    void reset() noexcept {
        if (T* object = std::exchange(object_, nullptr))
            close_fid(&object->fid);
    }

    // For the out-parameter of fi_fabric, fi_domain, fi_endpoint, ...: closes what is held.
    T** out() noexcept {
        reset();
        return &object_;
    }

private:
    T* object_ = nullptr;
};

} // namespace rpmem::fabric
