// SPDX-License-Identifier: BSD-3-Clause
// A hostile but authenticated client of rpmemd: it opens a control channel with its own
// certificate, creates its own pool, connects one lane with its own session token, and then
// posts RMA writes whose remote I/O vector says whatever the test wants, bypassing every check
// lib/fabric's Endpoint makes (range, length agreement). Used by the containment tests to
// show that such writes reach nothing outside the attacker's own pool data.
//
// How the lie is told (libfabric 1.17, tcp provider, prov/tcp/src/tcpx_rma.c): fi_writemsg
// sends the fi_rma_iov entries it is given as they are, and the header's size counts only the
// local iov's bytes; the two are compared by an assert() alone, compiled out in Debian's
// build. So a write that carries 8 bytes can claim any (address, length), and the target
// checks the claimed pair (ofi_mr_map_verify), not the bytes that follow. The sockets
// provider (prov/sockets/src/sock_rma.c) does compare the sum of the claimed lengths with the
// bytes carried, but in 64-bit arithmetic: two entries whose lengths add up to 8 modulo 2^64
// pass, and the target checks and fills each entry separately.
//
// Threads: one thread uses an attacker. Every call ends by its deadline.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/error.h"
#include "base/pool_attributes.h"
#include "channel/client.h"
#include "channel/tls_files.h"
#include "fabric/memory_region.h"
#include "fabric/own_queue_endpoint.h"
#include "fabric/stack.h"
#include "protocol/reply.h"
#include "protocol/request.h"

namespace rpmem::test {

class RmaAttacker {
public:
    struct Options {
        std::uint16_t port = 0; // rpmemd's control port on 127.0.0.1
        channel::TlsFiles tls;  // the attacker's own, valid, credentials
        std::string pool_set;   // beneath rpmemd's pool set directory
        std::uint64_t pool_size = 0;
        PoolAttributes attributes; // all zero: no headers
        protocol::ProviderPreference provider = protocol::ProviderPreference::tcp;
        std::chrono::milliseconds patience{20'000}; // bound of every step
    };

    // How a hostile write ended, as the attacker sees it.
    enum class Outcome {
        refused_locally, // the local provider refused to post it
        acknowledged,    // the target acked it (FI_DELIVERY_COMPLETE: the data was placed)
        failed,          // an error completion came back
        connection_lost, // the lane (or rpmemd) went away
        timed_out,       // nothing within the patience
    };
    struct WriteResult {
        Outcome outcome = Outcome::timed_out;
        std::string detail; // the error, for messages
    };

    // Connects, creates the pool and connects lane 0 of the session.
    static Result<std::unique_ptr<RmaAttacker>> create(const Options& options);

    ~RmaAttacker();
    RmaAttacker(const RmaAttacker&) = delete;
    RmaAttacker& operator=(const RmaAttacker&) = delete;

    // What the create reply said: remote_base, remote_key, offset_addressing, pool_size, ...
    const protocol::DataPath& data_path() const noexcept { return data_path_; }

    // One remote I/O vector entry as the write claims it. `address` is in the target's
    // addressing (a virtual address under FI_MR_VIRT_ADDR, an offset into the registered
    // region otherwise).
    struct RemoteSpan {
        std::uint64_t address = 0;
        std::uint64_t length = 0;
    };

    // Posts one RMA write that carries `payload` (at most 4 KiB) and whose remote I/O vector
    // (at most 4 entries, each with the session's key) claims `remote`, asking for
    // FI_DELIVERY_COMPLETE so that an ack means the target placed the bytes; then waits for
    // the outcome.
    WriteResult write(std::span<const RemoteSpan> remote, std::span<const std::byte> payload);
    WriteResult write(std::uint64_t address, std::uint64_t claimed_length,
                      std::span<const std::byte> payload) {
        const RemoteSpan span{address, claimed_length};
        return write(std::span<const RemoteSpan>(&span, 1), payload);
    }

    // The lane's endpoint is in a failed state (the connection ended).
    bool lane_failed() const noexcept;

private:
    RmaAttacker() = default;
    Result<void> open(const Options& options);

    static constexpr std::size_t kBufferSize = 4096;

    std::chrono::milliseconds patience_{0};
    std::uintptr_t last_context_ = 0;
    // Parent before child: the control session outlives the lane, the fabric its objects.
    std::unique_ptr<channel::Client> control_;
    protocol::DataPath data_path_;
    std::unique_ptr<fabric::Stack> stack_;
    std::unique_ptr<std::byte[]> buffer_;
    std::optional<fabric::MemoryRegion> buffer_region_;
    std::optional<fabric::OwnQueueEndpoint> lane_;
};

const char* name_of(RmaAttacker::Outcome outcome) noexcept;

} // namespace rpmem::test
