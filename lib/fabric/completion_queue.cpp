// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/completion_queue.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <string_view>

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include "fabric/fabric_error.h"
#include "fabric/fabric_library.h"

namespace rpmem::fabric {

namespace {

// Entries read per libfabric call; callers asking for more get them in several calls.
constexpr std::size_t kBatch = 16;

} // namespace

const char* operation_name(std::uint64_t flags) noexcept {
    if ((flags & FI_RECV) != 0)
        return "receive";
    if ((flags & FI_WRITE) != 0)
        return "RMA write";
    if ((flags & FI_READ) != 0)
        return "RMA read";
    if ((flags & FI_SEND) != 0)
        return "send";
    return "operation";
}

Result<std::unique_ptr<CompletionQueue>> CompletionQueue::open(const Domain& domain,
                                                               std::size_t size) {
    fi_cq_attr attr{};
    attr.size = size;
    attr.format = FI_CQ_FORMAT_MSG;
    attr.wait_obj = FI_WAIT_FD;
    attr.wait_cond = FI_CQ_COND_NONE;
    FidPtr<fid_cq> cq;
    int ret = fi_cq_open(domain.get(), &attr, cq.out(), nullptr);
    int fd = -1;
    if (ret == 0 && fi_control(&cq->fid, FI_GETWAIT, &fd) != 0)
        fd = -1;
    if (ret != 0 || fd < 0) {
        // No pollable descriptor (sockets with manual progress): fi_cq_sread does the blocking.
        attr.wait_obj = FI_WAIT_UNSPEC;
        ret = fi_cq_open(domain.get(), &attr, cq.out(), nullptr);
        fd = -1;
    }
    if (ret != 0)
        return fail(fabric_error(ret, fmt::format("fi_cq_open of {} entries", size)));
    return std::unique_ptr<CompletionQueue>(new CompletionQueue(std::move(cq), fd, size));
}

CompletionResult CompletionQueue::read(std::span<Completion> out) {
    std::array<fi_cq_msg_entry, kBatch> entries;
    const std::size_t count = std::min(out.size(), entries.size());
    const ssize_t ret = fi_cq_read(cq_.get(), entries.data(), count);
    return finish_read(ret, out, entries.data());
}

CompletionResult CompletionQueue::read_blocking(std::span<Completion> out,
                                                std::chrono::milliseconds timeout) {
    std::array<fi_cq_msg_entry, kBatch> entries;
    const std::size_t count = std::min(out.size(), entries.size());
    const ssize_t ret =
        fi_cq_sread(cq_.get(), entries.data(), count, nullptr, static_cast<int>(timeout.count()));
    return finish_read(ret, out, entries.data());
}

CompletionResult CompletionQueue::finish_read(ssize_t ret, std::span<Completion> out,
                                              const fi_cq_msg_entry* entries) {
    if (ret > 0) {
        for (ssize_t i = 0; i < ret; ++i)
            out[i] = Completion{entries[i].op_context, entries[i].flags, entries[i].len};
        return static_cast<std::size_t>(ret);
    }
    if (ret == -FI_EAGAIN || ret == -FI_ETIMEDOUT || ret == -FI_ECANCELED)
        return 0; // nothing, timed out, or woken by signal()
    if (ret == -FI_EAVAIL)
        return tl::unexpected(read_error());
    return tl::unexpected(
        CompletionError{nullptr, 0, fabric_error(static_cast<int>(ret), "fi_cq_read")});
}

CompletionError CompletionQueue::read_error() {
    fi_cq_err_entry entry{};
    const ssize_t ret = fi_cq_readerr(cq_.get(), &entry, 0);
    if (ret < 0)
        return CompletionError{nullptr, 0, fabric_error(static_cast<int>(ret), "fi_cq_readerr")};
    const int code = entry.err != 0 ? entry.err : FI_EOTHER;
    char detail[256] = {};
    fi_cq_strerror(cq_.get(), entry.prov_errno, entry.err_data, detail, sizeof detail);
    // Operations still queued when a connection ends complete as canceled; say what that means.
    std::string message =
        code == FI_ECANCELED
            ? fmt::format("{} cancelled: the connection was closed", operation_name(entry.flags))
            : fmt::format("{} failed: {}", operation_name(entry.flags), fabric_strerror(code));
    if (code != FI_ECANCELED && detail[0] != '\0' &&
        std::string_view(detail) != fabric_strerror(code))
        message += fmt::format(" (provider: {})", detail);
    return CompletionError{
        entry.op_context, entry.flags,
        Error(connection_errno_from_fabric(code), std::move(message), ErrorSource::fabric, code)};
}

void CompletionQueue::signal() noexcept {
    fi_cq_signal(cq_.get());
}

} // namespace rpmem::fabric
