// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/boundary/shared_counter_page.h"

#include <cerrno>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rpmem::daemon {

namespace {

constexpr std::size_t kPageSize = 4096;
static_assert(sizeof(protocol::DataPathCounterPage) <= kPageSize);
// The counters live in the memfd's second page: a sandboxed worker may map a file shared only
// past its first page (where a pool part has its header, kHeaderGuard).
constexpr off_t kCountersOffset = kPageSize;
constexpr off_t kFileSize = kCountersOffset + kPageSize;

} // namespace

Result<std::shared_ptr<SharedCounterPage>> SharedCounterPage::create() {
    UniqueFd fd(::memfd_create("rpmemd-counters", MFD_CLOEXEC));
    if (fd.get() < 0)
        return fail(errno, "creating a session's counters page (memfd_create)");
    if (::ftruncate(fd.get(), kFileSize) != 0)
        return fail(errno, "sizing a session's counters page");
    return map(std::move(fd));
}

Result<std::shared_ptr<SharedCounterPage>> SharedCounterPage::attach(UniqueFd fd) {
    // Whatever the descriptor is, it must hold at least the page, or touching it would fault.
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0)
        return fail(errno, "the counters page descriptor");
    if (!S_ISREG(status.st_mode) || status.st_size < kFileSize)
        return fail(EINVAL, "the counters page descriptor is not a two-page file");
    return map(std::move(fd));
}

Result<std::shared_ptr<SharedCounterPage>> SharedCounterPage::map(UniqueFd fd) {
    void* address =
        ::mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), kCountersOffset);
    if (address == MAP_FAILED)
        return fail(errno, "mapping a session's counters page");
    return std::shared_ptr<SharedCounterPage>(
        new SharedCounterPage(std::move(fd), poolset::MappedRange(address, kPageSize)));
}

} // namespace rpmem::daemon
