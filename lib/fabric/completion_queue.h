// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <rdma/fi_eq.h>
#include <tl/expected.hpp>

#include "base/error.h"
#include "fabric/domain.h"
#include "fabric/fid_ptr.h"

namespace rpmem::fabric {

// One successful completion: the context the operation was posted with, libfabric's flags
// (FI_SEND, FI_RECV, FI_WRITE, FI_READ with FI_MSG or FI_RMA), and the received length.
struct Completion {
    void* context = nullptr;
    std::uint64_t flags = 0;
    std::size_t length = 0;

    // Completes an operation this side posted to send or to access remote memory.
    bool is_transmit() const noexcept {
        return (flags & FI_RECV) == 0 && (flags & (FI_SEND | FI_WRITE | FI_READ)) != 0;
    }
};

// A failed operation (an error entry of the queue), or a wait that failed on its own account
// (context null): the connection broke, or the deadline passed.
struct CompletionError {
    void* context = nullptr;
    std::uint64_t flags = 0;
    Error error;
};

// How many completions were read (0: none ready), or the first error.
using CompletionResult = tl::expected<std::size_t, CompletionError>;

// "RMA write", "RMA read", "send", "receive" or "operation", from completion flags.
const char* operation_name(std::uint64_t flags) noexcept;

// Owner of a completion queue (fi_cq, FI_CQ_FORMAT_MSG) with a wait object: a descriptor that
// poll() watches when the provider has one (tcp), otherwise whatever fi_cq_sread blocks on
// (sockets with manual progress). One CQ may serve one endpoint (a client lane) or many (a
// target's responder thread, which then reads every endpoint's completions with one call and
// makes every endpoint progress on providers that only progress while their CQ is read).
// Its Domain must outlive it, and it must outlive the endpoints bound to it, which keep its
// address: it does not move; open() hands it out in a unique_ptr. Reading is thread-safe
// (FI_THREAD_SAFE), but one thread reads a given queue at a time in every use we make of it.
class CompletionQueue {
public:
    static Result<std::unique_ptr<CompletionQueue>> open(const Domain& domain, std::size_t size);

    CompletionQueue(const CompletionQueue&) = delete;
    CompletionQueue& operator=(const CompletionQueue&) = delete;
    ~CompletionQueue() = default;

    // Reads the completions that are ready without blocking (up to out.size()).
    CompletionResult read(std::span<Completion> out);

    // Blocks in fi_cq_sread up to `timeout` for at least one; 0 when none came.
    CompletionResult read_blocking(std::span<Completion> out, std::chrono::milliseconds timeout);

    // Wakes a thread blocked on this queue (fi_cq_signal).
    void signal() noexcept;

    // The descriptor poll() reports readable while completions (or progress work) wait, after
    // fi_trywait said blocking is safe; -1 when the provider has none (use read_blocking).
    int wait_fd() const noexcept { return wait_fd_; }
    fid_cq* get() const noexcept { return cq_.get(); }
    std::size_t size() const noexcept { return size_; }

private:
    CompletionQueue(FidPtr<fid_cq> cq, int wait_fd, std::size_t size)
        : cq_(std::move(cq))
        , wait_fd_(wait_fd)
        , size_(size) {}

    CompletionResult finish_read(ssize_t ret, std::span<Completion> out,
                                 const fi_cq_msg_entry* entries);
    CompletionError read_error();

    FidPtr<fid_cq> cq_;
    int wait_fd_;
    std::size_t size_;
};

} // namespace rpmem::fabric
