// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/error.h"
#include "fabric/memory_region.h"
#include "fabric/own_queue_endpoint.h"
#include "persist/credit_window.h"
#include "protocol/lane_message.h"
#include "protocol/preferences.h"

namespace rpmem::persist {

// How a lane behaves; the same for every lane of a replica.
struct InitiatorConfig {
    // For relaxed persists, flushes and drains; never any.
    protocol::PersistMethod method = protocol::PersistMethod::gpspm;
    std::size_t inline_size = protocol::kDefaultInlineSize; // as the target granted it
    std::size_t bounce_size = 256 * 1024;     // read buffer: larger reads go in pieces
    std::uint64_t max_write = 1ULL << 30;     // largest single RMA write (max_msg_size)
    std::chrono::milliseconds timeout{10000}; // one operation, start to finish
    // How the lane's endpoint waits; its spin is the ceiling its WaitController learns under.
    fabric::WaitPolicy wait{};
    // Set from another thread (the control channel's failure callback) to make waiting
    // operations give up with ECONNRESET at once.
    const std::atomic<bool>* abort = nullptr;
    std::string target; // names the target in messages, e.g. "node2:7636"
};

// The initiator half of every persistence method, for one lane (one connected endpoint with
// its own completion queue):
//  - strict persists and deep persists send their data inline in messages the target copies
//    with 8-byte stores and flushes; large ranges go as several messages in flight at once
//    (credit-based, see CreditWindow), not one round trip per chunk;
//  - relaxed persists use the method: commit (FI_COMMIT_COMPLETE writes), apm (writes, then
//    an 8-byte read on the same connection), gpspm (writes, then a flush message and its
//    reply);
//  - flush posts the same operations without waiting, drain waits for all of them at once.
// Owned by the replica; used by one thread at a time (the lane's caller). Ranges come checked
// by the replica (the initiator's one range check). Errors name the lane, the target and the
// step; the replica makes them sticky.
class InitiatorLane {
public:
    // `buffers` is registered for send, receive and read-target access; this lane uses
    // buffer_size(inline, bounce) bytes of it from `buffer_offset`.
    InitiatorLane(unsigned index, fabric::OwnQueueEndpoint endpoint,
                  const fabric::MemoryRegion& pool, const fabric::RemoteRegion& remote,
                  const fabric::MemoryRegion& buffers, std::size_t buffer_offset,
                  const InitiatorConfig& config);

    static std::size_t buffer_size(std::size_t inline_size, std::size_t bounce_size) noexcept;

    // Posts the reply receives; call once, after the connection is up, before anything else.
    Result<void> start();

    Result<void> persist(std::size_t offset, std::size_t length, bool relaxed);
    Result<void> deep_persist(std::size_t offset, std::size_t length);
    Result<void> flush(std::size_t offset, std::size_t length, bool relaxed);
    // Relaxed flushes of every range, whatever the method: RMA writes, then flush_list messages
    // the target answers once all are persistent (one message for up to inline_size / 16
    // ranges). Only to a target that announced Capability::flush_list. drain() waits for them.
    Result<void> flush_ranges(std::span<const protocol::LaneRange> ranges);
    Result<void> drain();
    // Sends a persist_records message carrying `records` (encoded records, at most
    // inline_size() bytes) that asks for its acknowledgement, and returns its sequence number;
    // `behind`: the bytes the caller still has queued after it (the message's offset field).
    // Waits only for a buffer and a credit.
    Result<std::uint32_t> send_records(std::span<const std::byte> records, std::uint64_t behind);
    // Waits until message `sequence` and every one before it is acknowledged.
    Result<void> wait_acknowledged(std::uint32_t sequence);
    bool acknowledged(std::uint32_t sequence) const noexcept {
        return credits_.acknowledged(sequence);
    }
    Result<void> read(std::span<std::byte> into, std::size_t offset);

    // The most one message carries inline (a strict persist of at most this is one message).
    std::size_t inline_size() const noexcept { return config_.inline_size; }
    // Whether one message can be sent now without waiting for a buffer or a credit (what is
    // known without reading the completion queue).
    bool can_send_now() const noexcept {
        return !send_busy_[next_send_slot_] && credits_.has_credit();
    }

    // Tells the target we are done; the endpoint fails afterwards.
    void shutdown() noexcept;

private:
    struct Tag {
        enum class Kind { send, reply, commit, read } kind;
        unsigned index;
    };

    Result<void> send_messages(protocol::LaneOperation operation, std::size_t offset,
                               std::size_t length, bool acknowledge_last);
    // `list`: a flush_list's ranges, `records`: a persist_records message's data (`length` is
    // then their encoded size).
    Result<void> send_one(protocol::LaneOperation operation, std::size_t offset, std::size_t length,
                          bool acknowledge, std::span<const protocol::LaneRange> list = {},
                          std::span<const std::byte> records = {});
    Result<void> write_range(std::size_t offset, std::size_t length, bool commit);
    Result<void> read_remote(std::size_t buffer_offset, std::size_t length,
                             std::uint64_t remote_offset);
    Result<void> wait_acknowledged();

    // Reads completions until `done()` holds, the operation's deadline passes (ETIMEDOUT),
    // the replica is aborted (ECONNRESET) or a completion reports an error. Returns at once,
    // without reading the clock, when `done()` already holds. The endpoint's Waiter decides
    // how long to spin.
    template <typename Done>
    Result<void> wait_until(Done&& done, const char* step);
    Result<void> on_completion(const fabric::Completion& completion);
    Error lane_error(Error error, std::string_view step) const;

    std::size_t send_slot_offset(unsigned slot) const noexcept;
    std::size_t reply_slot_offset(unsigned slot) const noexcept;

    unsigned index_;
    fabric::OwnQueueEndpoint endpoint_;
    const fabric::MemoryRegion& pool_;
    fabric::RemoteRegion remote_;
    const fabric::MemoryRegion& buffers_;
    std::size_t buffer_offset_;
    InitiatorConfig config_;
    std::size_t slot_size_;
    std::size_t apm_offset_;
    std::size_t bounce_offset_;

    std::array<Tag, protocol::kLaneCredits> send_tags_{};
    std::array<Tag, protocol::kLaneCredits> reply_tags_{};
    std::array<bool, protocol::kLaneCredits> send_busy_{};
    Tag commit_tag_{Tag::Kind::commit, 0};
    Tag read_tag_{Tag::Kind::read, 0};
    unsigned next_send_slot_ = 0;

    CreditWindow credits_;
    std::size_t commits_in_flight_ = 0;
    bool reads_in_flight_ = false;
    bool unread_writes_ = false;        // apm: writes not yet followed by a read
    std::uint64_t apm_read_offset_ = 0; // apm: where that read goes (pool offset)
};

} // namespace rpmem::persist
