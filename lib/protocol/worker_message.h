// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "base/error.h"
#include "protocol/data_path.h"
#include "protocol/preferences.h"
#include "protocol/session_token.h"

namespace rpmem::protocol {

// The messages between rpmemd's supervisor and one of its data-path workers, over an AF_UNIX
// SOCK_SEQPACKET socket (one message per packet; pool part descriptors travel beside a
// WorkerStart as SCM_RIGHTS, in the order of its segments' fd_index). The supervisor asks, the
// worker answers each request once, in order. Neither side trusts the other's bytes further
// than this codec's limits: the worker may be compromised by its client.
//
//   packet: u16 kind, then the body of that kind (little-endian, ByteWriter/ByteReader)

inline constexpr std::size_t kMaxWorkerMessage = 16 * 1024;
inline constexpr std::size_t kMaxWorkerSegments = 64; // part files per pool
inline constexpr std::size_t kMaxWorkerProviders = 8;
inline constexpr std::uint64_t kMaxWorkerReplyDelayNs = 1'000'000'000;

// A piece of the pool: `length` bytes of descriptor `fd_index` from `file_offset`, placed at
// `pool_offset` of the pool's contiguous range.
struct WorkerSegment {
    std::uint32_t fd_index = 0;
    std::uint64_t file_offset = 0;
    std::uint64_t length = 0;
    std::uint64_t pool_offset = 0;

    friend bool operator==(const WorkerSegment&, const WorkerSegment&) = default;
};

// Start the data plane of one session on the pool described by `segments`. The worker maps
// nothing of [0, data_offset) (the pool header) and registers only [data_offset, pool_size).
struct WorkerStart {
    std::uint64_t session_id = 0;
    std::string session_name; // for log lines
    SessionToken token{};
    ProviderPreference provider = ProviderPreference::any;
    std::vector<std::string> allowed_providers;
    std::string bind_host;
    std::uint32_t lanes = 1;
    std::uint64_t pool_size = 0;
    std::uint64_t data_offset = 0;
    bool is_pmem = false;
    std::vector<WorkerSegment> segments;
    std::uint64_t responder_spin_ns = 0;
    std::int32_t responder_cpu = -1;
    // inject-reply-delay: how long each lane reply is held (at most kMaxWorkerReplyDelayNs).
    std::uint64_t reply_delay_ns = 0;
    // The session's counters page (a memfd) comes as the last descriptor, after the parts.
    bool counters_page = false;

    friend bool operator==(const WorkerStart&, const WorkerStart&) = default;
};

// The answer to WorkerStart: errno 0 and the data plane's description, or the errno and why.
struct WorkerStarted {
    std::uint64_t session_id = 0;
    std::uint32_t errno_value = 0;
    std::string message;
    // As the client will see it but for the persistence method, pool size and token, which
    // the supervisor fills in (remote_base: remote address of pool offset 0, may wrap).
    DataPath data_path;
    bool software_provider = false;
    bool offers_rma_pmem = false;

    friend bool operator==(const WorkerStarted&, const WorkerStarted&) = default;
};

// Fence and forget one session: its lanes disconnected, its pool unmapped.
struct WorkerStop {
    std::uint64_t session_id = 0;
    friend bool operator==(const WorkerStop&, const WorkerStop&) = default;
};

struct WorkerStopped {
    std::uint64_t session_id = 0;
    friend bool operator==(const WorkerStopped&, const WorkerStopped&) = default;
};

// The first message each way: the sender's rpmemd version ("0.1.0"). The two halves of one
// daemon share one wire format only when they are the same build.
inline constexpr std::size_t kMaxWorkerVersionLength = 64;
struct WorkerHello {
    std::string version;
    friend bool operator==(const WorkerHello&, const WorkerHello&) = default;
};

using WorkerMessage =
    std::variant<WorkerStart, WorkerStarted, WorkerStop, WorkerStopped, WorkerHello>;

// EINVAL naming the field for values beyond the limits above.
Result<std::vector<std::uint8_t>> encode_worker_message(const WorkerMessage& message);
// EPROTO naming the field for anything malformed, truncated or beyond the limits.
Result<WorkerMessage> decode_worker_message(std::span<const std::uint8_t> packet);

} // namespace rpmem::protocol
