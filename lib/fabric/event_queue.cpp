// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/event_queue.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include "fabric/address.h"
#include "fabric/fabric_error.h"
#include "fabric/fabric_library.h"
#include "fabric/info.h"
#include "fabric/logger.h"

namespace rpmem::fabric {

namespace {

// Larger than any provider's connection private data (tcp and sockets: 256 bytes).
constexpr std::size_t kMaxPrivateData = 1024;

} // namespace

Result<std::unique_ptr<EventQueue>> EventQueue::open(const Fabric& fabric, std::size_t size) {
    fi_eq_attr attr{};
    attr.size = size;
    attr.wait_obj = FI_WAIT_FD;
    FidPtr<fid_eq> eq;
    int ret = fi_eq_open(fabric.get(), &attr, eq.out(), nullptr);
    if (ret == -FI_ENOSYS || ret == -FI_EINVAL) {
        attr.wait_obj = FI_WAIT_UNSPEC;
        ret = fi_eq_open(fabric.get(), &attr, eq.out(), nullptr);
    }
    if (ret != 0)
        return fail(fabric_error(ret, "fi_eq_open"));
    int fd = -1;
    if (attr.wait_obj == FI_WAIT_FD && fi_control(&eq->fid, FI_GETWAIT, &fd) != 0)
        fd = -1;
    return std::unique_ptr<EventQueue>(new EventQueue(fabric.get(), std::move(eq), fd));
}

Result<std::size_t> EventQueue::pump(std::chrono::milliseconds block) {
    std::size_t count = 0;
    int block_ms = static_cast<int>(block.count());
    for (;;) {
        auto read = read_one(block_ms);
        if (!read)
            return fail(std::move(read.error()));
        if (*read == 0)
            return count;
        ++count;
        block_ms = 0; // only the first read blocks
    }
}

Result<int> EventQueue::read_one(int block_ms) {
    alignas(fi_eq_cm_entry) std::byte buffer[sizeof(fi_eq_cm_entry) + kMaxPrivateData];
    auto* entry = reinterpret_cast<fi_eq_cm_entry*>(buffer);
    std::uint32_t event = 0;
    const ssize_t ret = block_ms > 0
                            ? fi_eq_sread(eq_.get(), &event, entry, sizeof buffer, block_ms, 0)
                            : fi_eq_read(eq_.get(), &event, entry, sizeof buffer, 0);
    if (ret == -FI_EAGAIN || ret == -FI_ETIMEDOUT)
        return 0;
    if (ret == -FI_EAVAIL) {
        fi_eq_err_entry error{};
        const ssize_t err = fi_eq_readerr(eq_.get(), &error, 0);
        if (err == -FI_EAGAIN)
            return 0; // another thread took it
        if (err < 0)
            return fail(fabric_error(static_cast<int>(err), "fi_eq_readerr"));
        dispatch_error(error);
        return 1;
    }
    if (ret < 0)
        return fail(fabric_error(static_cast<int>(ret), "fi_eq_read"));

    const std::size_t data_length = static_cast<std::size_t>(ret) > sizeof(fi_eq_cm_entry)
                                        ? static_cast<std::size_t>(ret) - sizeof(fi_eq_cm_entry)
                                        : 0;
    switch (event) {
    case FI_CONNREQ: {
        ConnectionRequest request;
        request.info.reset(entry->info);
        request.private_data.resize(data_length);
        if (data_length != 0)
            std::memcpy(request.private_data.data(), entry->data, data_length);
        if (request.info)
            request.peer = format_address(request.info->dest_addr, request.info->dest_addrlen);
        const std::lock_guard lock(mutex_);
        requests_.push_back(std::move(request));
        break;
    }
    case FI_CONNECTED: {
        const std::lock_guard lock(mutex_);
        if (auto found = watched_.find(entry->fid); found != watched_.end())
            found->second->mark_connected();
        break;
    }
    case FI_SHUTDOWN: {
        const std::lock_guard lock(mutex_);
        if (auto found = watched_.find(entry->fid); found != watched_.end())
            found->second->fail(Error(ECONNRESET, "connection shut down by the peer",
                                      ErrorSource::fabric, FI_ECONNRESET));
        break;
    }
    default:
        logger().debug("event queue: ignored event {}", event);
        InfoDeleter{}(entry->info); // null for every event but FI_CONNREQ
        break;
    }
    return 1;
}

void EventQueue::dispatch_error(const fi_eq_err_entry& entry) {
    const int code = entry.err != 0 ? entry.err : FI_EOTHER;
    char detail[256] = {};
    fi_eq_strerror(eq_.get(), entry.prov_errno, entry.err_data, detail, sizeof detail);
    std::string message;
    if (code == FI_ECONNREFUSED)
        message = "connection rejected by the peer";
    else
        message = fmt::format("connection failed: {} ({})", fabric_strerror(code), detail);
    const std::lock_guard lock(mutex_);
    if (entry.fid != nullptr) {
        if (auto found = watched_.find(entry.fid); found != watched_.end()) {
            found->second->fail(
                Error(connection_errno_from_fabric(code), message, ErrorSource::fabric, code));
            return;
        }
        if (entry.fid->fclass == FI_CLASS_PEP) {
            if (!listener_failure_)
                listener_failure_.emplace(
                    errno_from_fabric(code),
                    fmt::format("listener failed: {} ({})", fabric_strerror(code), detail),
                    ErrorSource::fabric, code);
            return;
        }
    }
    logger().debug("event queue: error event for an unknown object: {}", message);
}

std::optional<ConnectionRequest> EventQueue::take_request() {
    const std::lock_guard lock(mutex_);
    if (requests_.empty())
        return std::nullopt;
    ConnectionRequest request = std::move(requests_.front());
    requests_.pop_front();
    return request;
}

Result<ConnectionRequest> EventQueue::wait_request(Deadline deadline,
                                                   std::chrono::milliseconds slice) {
    for (;;) {
        if (auto request = take_request())
            return std::move(*request);
        {
            const std::lock_guard lock(mutex_);
            if (listener_failure_)
                return fail(*listener_failure_);
        }
        const int block_ms = milliseconds_until(deadline, slice);
        if (block_ms == 0)
            return fail(ETIMEDOUT, "no connection request before the deadline", ErrorSource::fabric,
                        FI_ETIMEDOUT);
        auto pumped = pump(std::chrono::milliseconds(block_ms));
        if (!pumped)
            return fail(std::move(pumped.error()));
    }
}

void EventQueue::watch(fid_t endpoint, std::shared_ptr<ConnectionState> state) {
    const std::lock_guard lock(mutex_);
    watched_[endpoint] = std::move(state);
}

void EventQueue::forget(fid_t endpoint) {
    const std::lock_guard lock(mutex_);
    watched_.erase(endpoint);
}

} // namespace rpmem::fabric
