// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/pool_mapping.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include <fcntl.h>
#include <libpmem.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "poolset/parser.h"

namespace rpmem::poolset {

namespace {

constexpr mode_t kPartMode = 0600;

// Unlinks the part files created so far unless the whole operation succeeded.
class CreatedFiles {
public:
    CreatedFiles() = default;
    CreatedFiles(const CreatedFiles&) = delete;
    CreatedFiles& operator=(const CreatedFiles&) = delete;
    ~CreatedFiles() {
        if (!keep_) {
            for (const std::string& path : paths_)
                (void)::unlink(path.c_str());
        }
    }
    void add(std::string path) { paths_.push_back(std::move(path)); }
    void keep() { keep_ = true; }

private:
    std::vector<std::string> paths_;
    bool keep_ = false;
};

struct OpenedPart {
    UniqueFd fd;
    std::uint64_t size = 0;
    std::uint64_t ctime = 0;
    bool created = false;
    bool device_dax = false;
};

Error system_error(int error, const std::string& what) {
    return Error::from_errno(error, what);
}

std::string part_label(const Part& part) {
    return "part '" + part.path + "'";
}

std::optional<std::string> read_sys_file(const std::string& path) {
    std::ifstream in(path);
    std::string value;
    if (!in || !std::getline(in, value))
        return std::nullopt;
    return value;
}

// A character device is device DAX when sysfs files it under the dax subsystem; its size is
// then in /sys/dev/char/MAJOR:MINOR/size.
std::optional<std::uint64_t> device_dax_size(const struct stat& st) {
    if (!S_ISCHR(st.st_mode))
        return std::nullopt;
    std::string base = "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" +
                       std::to_string(minor(st.st_rdev));
    std::string subsystem;
    std::array<char, 4096> target{};
    ssize_t length = ::readlink((base + "/subsystem").c_str(), target.data(), target.size() - 1);
    if (length <= 0)
        return std::nullopt;
    subsystem.assign(target.data(), static_cast<std::size_t>(length));
    if (subsystem.size() < 4 || subsystem.substr(subsystem.size() - 4) != "/dax")
        return std::nullopt;
    auto size = read_sys_file(base + "/size");
    if (!size)
        return std::nullopt;
    auto parsed = parse_size(*size);
    if (!parsed)
        return std::nullopt;
    return *parsed;
}

Result<void> lock_part(const UniqueFd& fd, const Part& part) {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0)
        return {};
    int error = errno;
    if (error == EWOULDBLOCK)
        return fail(EBUSY, part_label(part) + " is locked: the pool is in use");
    return fail(system_error(error, "locking " + part_label(part)));
}

// The first 4 KiB must be zero before create() may write headers into an existing part.
Result<void> check_part_empty(const UniqueFd& fd, const Part& part, std::uint64_t size) {
    std::array<std::uint8_t, kPoolHeaderSize> buffer{};
    std::size_t wanted = static_cast<std::size_t>(std::min<std::uint64_t>(size, buffer.size()));
    std::size_t done = 0;
    while (done < wanted) {
        ssize_t got =
            ::pread(fd.get(), buffer.data() + done, wanted - done, static_cast<off_t>(done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return fail(system_error(errno, "reading " + part_label(part)));
        if (got == 0)
            break;
        done += static_cast<std::size_t>(got);
    }
    if (std::any_of(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(done),
                    [](std::uint8_t b) { return b != 0; }))
        return fail(EEXIST, part_label(part) + " already holds data; refusing to overwrite it");
    return {};
}

Result<OpenedPart> open_existing(const Part& part, bool create) {
    OpenedPart opened;
    opened.fd = UniqueFd(::open(part.path.c_str(), O_RDWR | O_CLOEXEC));
    if (!opened.fd.valid())
        return fail(system_error(errno, "opening " + part_label(part)));
    if (auto locked = lock_part(opened.fd, part); !locked)
        return tl::unexpected(std::move(locked.error()));
    struct stat st {};
    if (::fstat(opened.fd.get(), &st) != 0)
        return fail(system_error(errno, "fstat of " + part_label(part)));
    if (auto dax = device_dax_size(st)) {
        opened.device_dax = true;
        opened.size = *dax;
    } else if (S_ISREG(st.st_mode)) {
        if (!part.size)
            return fail(EINVAL, part_label(part) + ": AUTO sizes are only for device DAX");
        opened.size = static_cast<std::uint64_t>(st.st_size);
    } else {
        return fail(EINVAL, part_label(part) + " is neither a regular file nor device DAX");
    }
    if (part.size && *part.size != opened.size)
        return fail(EINVAL, part_label(part) + " has " + std::to_string(opened.size) +
                                " bytes, but the set says " + std::to_string(*part.size));
    opened.ctime = static_cast<std::uint64_t>(st.st_ctime);
    if (create) {
        if (auto empty = check_part_empty(opened.fd, part, opened.size); !empty)
            return tl::unexpected(std::move(empty.error()));
    }
    return opened;
}

Result<OpenedPart> create_new(const Part& part, CreatedFiles& created) {
    if (!part.size)
        return fail(ENOENT, part_label(part) + " does not exist (an AUTO part must be an "
                                               "existing device DAX)");
    OpenedPart opened;
    opened.fd =
        UniqueFd(::open(part.path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, kPartMode));
    if (!opened.fd.valid())
        return fail(system_error(errno, "creating " + part_label(part)));
    created.add(part.path);
    opened.created = true;
    // The umask may only have narrowed the mode; make it exactly owner read/write.
    if (::fchmod(opened.fd.get(), kPartMode) != 0)
        return fail(system_error(errno, "chmod of " + part_label(part)));
    if (auto locked = lock_part(opened.fd, part); !locked)
        return tl::unexpected(std::move(locked.error()));
    if (int error = ::posix_fallocate(opened.fd.get(), 0, static_cast<off_t>(*part.size));
        error != 0)
        return fail(system_error(error, "allocating " + std::to_string(*part.size) + " bytes for " +
                                            part_label(part)));
    struct stat st {};
    if (::fstat(opened.fd.get(), &st) != 0)
        return fail(system_error(errno, "fstat of " + part_label(part)));
    opened.size = *part.size;
    opened.ctime = static_cast<std::uint64_t>(st.st_ctime);
    return opened;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

} // namespace

Result<PoolMapping> PoolMapping::create(const PoolSet& set, std::size_t replica) {
    return map(set, replica, true);
}

Result<PoolMapping> PoolMapping::open(const PoolSet& set, std::size_t replica) {
    return map(set, replica, false);
}

Result<PoolMapping> PoolMapping::map(const PoolSet& set, std::size_t replica, bool create) {
    if (replica >= set.replicas.size() || set.replicas[replica].is_remote())
        return fail(EINVAL, set.origin + ": replica " + std::to_string(replica) +
                                " is not a local replica of the set");
    PoolMapping mapping;
    mapping.set_.origin = set.origin;
    mapping.set_.options = set.options;
    mapping.set_.replicas.push_back(set.replicas[replica]);
    ReplicaSpec& parts = mapping.set_.replicas[0];

    CreatedFiles created;
    bool all_device_dax = true;
    for (Part& part : parts.parts) {
        auto opened =
            create && !exists(part.path) ? create_new(part, created) : open_existing(part, create);
        if (!opened)
            return tl::unexpected(std::move(opened.error().add_context(set.origin)));
        part.size = opened->size;
        all_device_dax = all_device_dax && opened->device_dax;
        mapping.fds_.push_back(std::move(opened->fd));
        mapping.ctimes_.push_back(opened->ctime);
        mapping.created_.push_back(opened->created);
    }

    std::uint64_t total = *mapping.set_.net_size(parts);
    if (total == 0)
        return fail(EINVAL, set.origin + ": the pool's net size is zero");

    // Reserve the whole range first, then map each part's data over it at its place.
    void* reserved =
        ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED)
        return fail(system_error(errno, set.origin + ": reserving " + std::to_string(total) +
                                            " bytes of address space"));
    mapping.range_ = MappedRange(reserved, total);

    std::uint64_t offset = 0;
    for (std::size_t p = 0; p < parts.parts.size(); ++p) {
        std::uint64_t skip = mapping.set_.skipped_header_bytes(p);
        std::uint64_t size = *parts.parts[p].size;
        std::uint64_t length = size > skip ? (size - skip) & ~(kMappingAlignment - 1) : 0;
        if (length == 0)
            continue;
        void* want = mapping.range_.data() + offset;
        void* got = ::mmap(want, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                           mapping.fds_[p].get(), static_cast<off_t>(skip));
        if (got == MAP_FAILED)
            return fail(
                system_error(errno, set.origin + ": mapping " + part_label(parts.parts[p])));
        mapping.segments_.push_back({p, skip, length, offset});
        offset += length;
    }
    if (offset != total)
        return fail(EINVAL, set.origin + ": mapped " + std::to_string(offset) +
                                " bytes, expected the net size " + std::to_string(total));

    for (std::size_t p = 0; p < mapping.set_.header_count(parts); ++p) {
        void* header = ::mmap(nullptr, kPoolHeaderSize, PROT_READ | PROT_WRITE, MAP_SHARED,
                              mapping.fds_[p].get(), 0);
        if (header == MAP_FAILED)
            return fail(system_error(errno, set.origin + ": mapping the header of " +
                                                part_label(parts.parts[p])));
        mapping.header_maps_.emplace_back(header, kPoolHeaderSize);
    }

    mapping.is_pmem_ =
        all_device_dax || ::pmem_is_pmem(mapping.range_.data(), mapping.range_.size()) != 0;
    created.keep();
    return mapping;
}

Result<void> PoolMapping::remove(const PoolSet& set, bool force) {
    if (set.has_remote_replicas())
        return fail(EINVAL, set.origin + ": a set with remote replicas cannot be removed here");
    for (const ReplicaSpec& replica : set.replicas) {
        for (const Part& part : replica.parts) {
            UniqueFd fd(::open(part.path.c_str(), O_RDWR | O_CLOEXEC));
            if (!fd.valid()) {
                if (force)
                    continue;
                return fail(system_error(errno, set.origin + ": opening " + part_label(part)));
            }
            if (auto locked = lock_part(fd, part); !locked) {
                if (force)
                    continue;
                return tl::unexpected(std::move(locked.error().add_context(set.origin)));
            }
            if (::unlink(part.path.c_str()) != 0 && !force)
                return fail(system_error(errno, set.origin + ": removing " + part_label(part)));
        }
    }
    return {};
}

Result<void> PoolMapping::flush(std::uint8_t* address, std::size_t length, bool is_header) const {
    if (is_pmem_) {
        ::pmem_persist(address, length);
        return {};
    }
    if (::pmem_msync(address, length) != 0)
        return fail(system_error(
            errno, set_.origin + (is_header ? ": msync of a pool header" : ": msync of the pool")));
    return {};
}

Result<void> PoolMapping::persist(std::uint64_t offset, std::uint64_t length) const {
    if (offset > size() || length > size() - offset)
        return fail(EINVAL, set_.origin + ": persist range beyond the pool");
    if (length == 0)
        return {};
    return flush(data() + offset, length, false);
}

void PoolMapping::will_read(std::uint64_t offset, std::uint64_t length) const noexcept {
    if (offset >= size())
        return;
    length = std::min(length, size() - offset);
    // madvise wants a page-aligned start; the range itself starts page-aligned.
    const std::uint64_t start = offset / kMappingAlignment * kMappingAlignment;
    (void)::madvise(data() + start, length + (offset - start), MADV_WILLNEED);
}

Result<void> PoolMapping::deep_persist(std::uint64_t offset, std::uint64_t length) const {
    if (offset > size() || length > size() - offset)
        return fail(EINVAL, set_.origin + ": deep persist range beyond the pool");
    if (length == 0)
        return {};
    if (::pmem_deep_persist(data() + offset, length) != 0)
        return fail(system_error(errno, set_.origin + ": deep persist"));
    return {};
}

std::vector<PoolHeader> PoolMapping::read_headers() const {
    std::vector<PoolHeader> headers;
    for (const MappedRange& page : header_maps_)
        headers.push_back(PoolHeader::decode(
            std::span<const std::uint8_t, kPoolHeaderSize>(page.data(), kPoolHeaderSize)));
    return headers;
}

Result<void> PoolMapping::write_headers(std::span<const PoolHeader> headers) {
    if (headers.size() != header_maps_.size())
        return fail(EINVAL, set_.origin + ": expected " + std::to_string(header_maps_.size()) +
                                " pool headers, got " + std::to_string(headers.size()));
    for (std::size_t p = 0; p < headers.size(); ++p) {
        PoolHeader::Bytes bytes = headers[p].encode();
        std::memcpy(header_maps_[p].data(), bytes.data(), bytes.size());
        if (auto flushed = flush(header_maps_[p].data(), bytes.size(), true); !flushed)
            return flushed;
    }
    return {};
}

} // namespace rpmem::poolset
