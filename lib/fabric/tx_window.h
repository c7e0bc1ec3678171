// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rpmem::fabric {

// The transmit-queue accounting of one endpoint under selective completion: most writes are
// posted without a completion, and a provider frees their queue entries without telling us.
// The window counts operations in flight and knows which of them were posted signalled; since
// an endpoint's transmit operations complete in order (one connection, one queue), the
// completion of a signalled operation retires it and everything posted before it. An
// unsignalled operation that would take the last free entry while no signalled one is
// outstanding is signalled anyway, so a full window always has a completion coming that
// frees it. Pure bookkeeping, no I/O; owned by its endpoint, not thread-safe.
class TxWindow {
public:
    enum class Decision {
        unsignalled, // post without a completion
        signalled,   // post with a completion (asked for, or forced to keep the window moving)
        full,        // no free entry: read completions before posting
    };

    explicit TxWindow(std::size_t depth);

    Decision plan(bool wants_completion) const noexcept;
    void on_posted(bool signalled) noexcept;
    // The oldest outstanding signalled operation completed.
    void on_completed() noexcept;

    std::size_t depth() const noexcept { return ring_.size(); }
    std::size_t in_flight() const noexcept { return static_cast<std::size_t>(posted_ - retired_); }
    std::size_t signalled_outstanding() const noexcept { return count_; }

private:
    std::uint64_t posted_ = 0;  // sequence number of the last operation posted
    std::uint64_t retired_ = 0; // every operation up to this one is known to be done
    // Sequence numbers of the outstanding signalled operations, oldest at head_.
    std::vector<std::uint64_t> ring_;
    std::size_t head_ = 0;
    std::size_t count_ = 0;
};

} // namespace rpmem::fabric
