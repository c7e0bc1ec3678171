// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/worker/responder_pool.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <exception>
#include <limits>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fabric/deadline.h"
#include "fabric/wait_controller.h"

namespace rpmem::daemon {

namespace {

using fabric::Clock;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// How often a spinning responder looks at the descriptors of the sessions it is not spinning on.
constexpr std::chrono::microseconds kPeekInterval{20};
// Every slice a thread looks at each of its sessions and their connection events (a missed
// wake-up, a peer that went). It does so a few sessions at a time, between polls of the busy
// ones: in one go, 128 sessions took 0.7 ms (2.2 ms at most), and a request waited that long.
constexpr std::size_t kPassChunk = 8;
constexpr std::size_t kNoPass = std::numeric_limits<std::size_t>::max();
// How often a provider without descriptors is polled while its thread would block.
constexpr std::chrono::milliseconds kNoWaitPoll{1};
// The longest a sole session without descriptors blocks in its provider while holding the
// thread's lock (detach waits this long at most).
constexpr std::chrono::milliseconds kProviderBlock{10};

} // namespace

// One responder thread and the sessions attached to it. Blocking costs O(ready), not
// O(sessions): each session's descriptors join this thread's epoll set once, and a session is
// made safe to block on (fi_trywait, which costs a provider progress call) only when it was
// read since it was last armed; one that was not is still armed, its descriptors still exact.
class ResponderPool::Responder {
public:
    explicit Responder(const ResponderOptions& options)
        : options_(options) {}

    ~Responder() {
        stop_.store(true, std::memory_order_release);
        wake();
        if (thread_.joinable())
            thread_.join();
    }

    Result<void> start() {
        int ends[2] = {-1, -1};
        if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0)
            return fail(Error::from_errno(errno, "creating a responder's wake-up pipe"));
        wake_read_ = UniqueFd(ends[0]);
        wake_write_ = UniqueFd(ends[1]);
        epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
        if (epoll_.get() < 0)
            return fail(Error::from_errno(errno, "creating a responder's epoll set"));
        epoll_event wake_event{};
        wake_event.events = EPOLLIN;
        wake_event.data.ptr = nullptr;
        if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_read_.get(), &wake_event) != 0)
            return fail(Error::from_errno(errno, "watching a responder's wake-up pipe"));
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error& e) {
            return fail(EAGAIN, std::string("starting a responder thread: ") + e.what());
        }
        return {};
    }

    void add(Responsive& session) {
        with_lock([&] {
            auto entry = std::make_unique<Entry>();
            entry->session = &session;
            sessions_.push_back(std::move(entry));
            count_.store(sessions_.size(), std::memory_order_relaxed);
        });
    }

    bool remove(Responsive& session) {
        bool found = false;
        with_lock([&] {
            auto it = std::find_if(sessions_.begin(), sessions_.end(),
                                   [&](const auto& e) { return e->session == &session; });
            if (it != sessions_.end()) {
                // Before the session closes them: a closed descriptor would stay in the set.
                for (int fd : (*it)->watched)
                    (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
                sessions_.erase(it);
                found = true;
            }
            count_.store(sessions_.size(), std::memory_order_relaxed);
        });
        return found;
    }

    std::size_t load() const noexcept { return count_.load(std::memory_order_relaxed); }

private:
    struct Entry {
        Responsive* session = nullptr;
        bool due = true;    // look at it (and its events) in the next sweep
        bool armed = false; // fi_trywait said so and nothing read it since
        bool no_wait = false;
        std::vector<int> watched; // its descriptors in the epoll set
        Clock::time_point last_work;
    };

    // Takes the lock ahead of the thread: it yields while someone waits for the lock, and a
    // blocked thread is woken so that it lets go of the lock.
    template <typename F>
    void with_lock(F&& f) {
        waiting_.fetch_add(1, std::memory_order_acq_rel);
        wake();
        {
            std::lock_guard lock(mutex_);
            ++generation_;
            f();
        }
        waiting_.fetch_sub(1, std::memory_order_acq_rel);
    }

    void wake() noexcept {
        if (wake_write_.get() >= 0) {
            const char byte = 1;
            [[maybe_unused]] auto n = ::write(wake_write_.get(), &byte, 1);
        }
    }

    void drain_wake() noexcept {
        char bytes[64];
        while (::read(wake_read_.get(), bytes, sizeof bytes) > 0) {
        }
    }

    void pin() {
        if (options_.cpu < 0)
            return;
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        CPU_SET(options_.cpu, &cpus);
        if (pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus) != 0)
            spdlog::warn("cannot pin a responder thread to CPU {}", options_.cpu);
    }

    // One session's poll; a session that throws (an allocation in a log line) is reported and
    // then served on: its state is its lanes', which stay consistent between completions.
    static std::size_t poll_one(Entry& entry, bool events) noexcept {
        entry.armed = false;
        try {
            return entry.session->poll(events);
        } catch (const std::exception& e) {
            spdlog::error("{}: the responder failed: {}", entry.session->name(), e.what());
        } catch (...) {
            spdlog::error("{}: the responder failed", entry.session->name());
        }
        return 0;
    }

    void run() noexcept {
        pin();
        fabric::WaitController controller(options_.spin);
        fabric::SpinMeter meter;
        fabric::Preemptions preemptions;
        bool spinning = false;
        const auto end_spin = [&] {
            if (spinning)
                controller.on_spin(meter.spun(), meter.stolen(),
                                   [&] { return preemptions.since_last(); });
            spinning = false;
        };
        Clock::time_point idle_since = Clock::now();
        Clock::time_point last_full = Clock::time_point();
        std::size_t pass = kNoPass; // the full pass's next session
        Clock::time_point last_peek = Clock::time_point();
        // Held across spins: let go only for attach/detach (waiting_) and while blocked.
        std::unique_lock lock(mutex_, std::defer_lock);
        while (!stop_.load(std::memory_order_acquire)) {
            if (waiting_.load(std::memory_order_acquire) > 0) {
                end_spin();
                if (lock.owns_lock())
                    lock.unlock();
                while (waiting_.load(std::memory_order_acquire) > 0)
                    std::this_thread::yield();
            }
            if (!lock.owns_lock())
                lock.lock();
            Clock::time_point now = Clock::now();
            if (pass == kNoPass && now - last_full >= options_.slice) {
                last_full = now;
                pass = 0;
            }
            // Sweep: sessions that were woken, that had work within the spin budget, and the
            // next few of the full pass (connection events, a missed wake-up).
            const std::size_t pass_end = pass == kNoPass ? 0 : pass + kPassChunk;
            const auto budget = controller.spin_budget();
            std::size_t work = 0;
            std::size_t index = 0;
            for (auto& entry : sessions_) {
                const bool in_pass = index >= pass && index < pass_end;
                ++index;
                if (!in_pass && !entry->due && now - entry->last_work > budget)
                    continue;
                const std::size_t done = poll_one(*entry, in_pass || entry->due);
                entry->due = false;
                if (done > 0) {
                    entry->last_work = now;
                    work += done;
                }
            }
            if (pass != kNoPass)
                pass = pass_end >= sessions_.size() ? kNoPass : pass_end;
            now = Clock::now();
            if (work > 0) {
                end_spin();
                controller.on_work(now - idle_since);
                idle_since = now;
                continue;
            }
            if (pass != kNoPass)
                continue; // the full pass goes on before the thread spins or blocks
            if (budget == fabric::WaitController::kForever || now - idle_since < budget) {
                if (spinning)
                    meter.tick(now);
                else
                    meter.start(now);
                spinning = true;
                // While spinning on the hot sessions, look at the others' descriptors now and
                // then: one that is readable has work (or a connection event) too.
                if (now - last_peek >= kPeekInterval) {
                    last_peek = now;
                    collect(0);
                } else {
                    cpu_relax();
                }
                continue;
            }
            end_spin();
            block(lock, controller);
        }
    }

    // Marks the sessions of the first `ready` events due (the wake-up pipe is drained).
    void mark_due(int ready) noexcept {
        for (int i = 0; i < ready; ++i) {
            void* owner = events_[static_cast<std::size_t>(i)].data.ptr;
            if (owner == nullptr)
                drain_wake();
            else
                static_cast<Entry*>(owner)->due = true;
        }
    }

    // With the lock held: what the epoll set reports within `timeout_ms`.
    void collect(int timeout_ms) noexcept {
        mark_due(::epoll_wait(epoll_.get(), events_.data(), static_cast<int>(events_.size()),
                              timeout_ms));
    }

    // Arms what needs it; false when a session has work already (do not block).
    bool arm_all(std::size_t& without_fd) {
        bool ready = false;
        for (auto& entry : sessions_) {
            if (entry->no_wait) {
                ++without_fd;
                continue;
            }
            if (entry->armed)
                continue;
            fds_.clear();
            Responsive::Arm arm = Responsive::Arm::ready;
            try {
                arm = entry->session->arm(fds_);
            } catch (...) {
                arm = Responsive::Arm::ready;
            }
            if (arm == Responsive::Arm::ready) {
                entry->due = true;
                ready = true;
            } else if (arm == Responsive::Arm::no_wait) {
                entry->no_wait = true;
                ++without_fd;
            } else {
                entry->armed = true;
                if (entry->watched.empty())
                    watch(*entry);
            }
        }
        return !ready;
    }

    // Its descriptors join the epoll set (once: they do not change while it is attached).
    void watch(Entry& entry) {
        for (const pollfd& fd : fds_) {
            epoll_event event{};
            event.events = EPOLLIN;
            event.data.ptr = &entry;
            if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.fd, &event) == 0 || errno == EEXIST)
                entry.watched.push_back(fd.fd);
        }
        if (entry.watched.empty())
            entry.no_wait = true; // cannot be watched: polled every kNoWaitPoll
    }

    // Blocks until a session's descriptor or the wake-up pipe is readable, or the slice ends.
    void block(std::unique_lock<std::mutex>& lock, fabric::WaitController& controller) {
        std::size_t without_fd = 0;
        if (!arm_all(without_fd))
            return;
        if (without_fd == 1 && sessions_.size() == 1) {
            // The one way to wait on such a provider without spinning here: its own blocking
            // read (which, for sockets with manual progress, also moves its RMA traffic).
            Entry& entry = *sessions_.front();
            std::size_t done = 0;
            try {
                done = entry.session->block(std::min(options_.slice, kProviderBlock));
            } catch (...) {
            }
            if (done == 0)
                controller.on_idle();
            entry.due = true;
            return;
        }
        const std::uint64_t generation = generation_;
        lock.unlock();
        const auto timeout = without_fd > 0 ? kNoWaitPoll : options_.slice;
        const int ready =
            ::epoll_wait(epoll_.get(), events_.data(), static_cast<int>(events_.size()),
                         static_cast<int>(timeout.count()));
        lock.lock();
        if (ready == 0 && without_fd == 0)
            controller.on_idle();
        if (generation != generation_) {
            // Sessions came or went while blocked: an event may name one that is gone.
            drain_wake();
            for (auto& entry : sessions_)
                entry->due = true;
            return;
        }
        mark_due(ready);
        if (without_fd > 0)
            for (auto& entry : sessions_)
                if (entry->no_wait)
                    entry->due = true;
    }

    const ResponderOptions& options_;
    std::mutex mutex_; // guards sessions_, generation_ and every call into a session
    std::vector<std::unique_ptr<Entry>> sessions_;
    std::vector<pollfd> fds_; // arm()'s scratch
    std::array<epoll_event, 64> events_;
    std::uint64_t generation_ = 0; // changes with sessions_
    std::atomic<std::size_t> count_{0};
    std::atomic<unsigned> waiting_{0};
    std::atomic<bool> stop_{false};
    UniqueFd wake_read_;
    UniqueFd wake_write_;
    UniqueFd epoll_;
    std::thread thread_;
};

ResponderPool::ResponderPool(ResponderOptions options)
    : options_(options) {
    options_.threads = std::max(1U, options_.threads);
}

ResponderPool::~ResponderPool() = default;

Result<void> ResponderPool::attach(Responsive& session) {
    std::lock_guard lock(mutex_);
    Responder* chosen = nullptr;
    if (responders_.size() < options_.threads) {
        auto responder = std::make_unique<Responder>(options_);
        if (auto started = responder->start(); !started)
            return fail(std::move(started.error()).add_context(session.name()));
        chosen = responder.get();
        responders_.push_back(std::move(responder));
    } else {
        chosen =
            std::min_element(responders_.begin(), responders_.end(),
                             [](const auto& a, const auto& b) { return a->load() < b->load(); })
                ->get();
    }
    chosen->add(session);
    return {};
}

void ResponderPool::detach(Responsive& session) noexcept {
    std::lock_guard lock(mutex_);
    for (auto it = responders_.begin(); it != responders_.end(); ++it) {
        if (!(*it)->remove(session))
            continue;
        if ((*it)->load() == 0)
            responders_.erase(it); // joins the thread: it ends with its last session
        return;
    }
}

unsigned ResponderPool::threads() const {
    std::lock_guard lock(mutex_);
    return static_cast<unsigned>(responders_.size());
}

std::size_t ResponderPool::sessions() const {
    std::lock_guard lock(mutex_);
    std::size_t total = 0;
    for (const auto& responder : responders_)
        total += responder->load();
    return total;
}

} // namespace rpmem::daemon
