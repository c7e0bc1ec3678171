// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/small_file.h"

#include <cerrno>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/unique_fd.h"

namespace rpmem::daemon {

Result<std::optional<std::string>> read_small_file(int directory, const std::string& leaf,
                                                   const std::string& path, std::size_t max_size) {
    UniqueFd fd(::openat(directory, leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) {
        if (errno == ENOENT)
            return std::optional<std::string>{};
        return fail(Error::from_errno(errno, "opening " + path));
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0)
        return fail(Error::from_errno(errno, "reading " + path));
    if (!S_ISREG(info.st_mode) || info.st_size > static_cast<off_t>(max_size))
        return fail(EINVAL,
                    fmt::format("{}: not a regular file of at most {} bytes", path, max_size));
    std::string text(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t got = ::read(fd.get(), text.data() + done, text.size() - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return fail(Error::from_errno(errno, "reading " + path));
        if (got == 0)
            break;
        done += static_cast<std::size_t>(got);
    }
    text.resize(done);
    return std::optional<std::string>(std::move(text));
}

Result<void> replace_file_durably(int directory, const std::string& leaf, std::string_view text,
                                  const std::string& path, std::string_view what) {
    const std::string temporary = leaf + ".new";
    auto failed = [&](const char* step) {
        const int saved = errno;
        (void)::unlinkat(directory, temporary.c_str(), 0);
        return fail(Error::from_errno(saved, fmt::format("{} the {} {}", step, what, path)));
    };
    {
        UniqueFd fd(::openat(directory, temporary.c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (fd.get() < 0)
            return failed("creating");
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t wrote = ::write(fd.get(), text.data() + done, text.size() - done);
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote < 0)
                return failed("writing");
            done += static_cast<std::size_t>(wrote);
        }
        if (::fsync(fd.get()) != 0)
            return failed("flushing");
    }
    if (::renameat(directory, temporary.c_str(), directory, leaf.c_str()) != 0)
        return failed("replacing");
    // The rename is durable only once the directory is.
    UniqueFd parent(::openat(directory, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (parent.get() < 0 || ::fsync(parent.get()) != 0)
        return fail(Error::from_errno(errno, "flushing the directory of " + path));
    return {};
}

Result<void> remove_small_file(int directory, const std::string& leaf, const std::string& path) {
    if (::unlinkat(directory, leaf.c_str(), 0) != 0 && errno != ENOENT)
        return fail(Error::from_errno(errno, "removing " + path));
    return {};
}

} // namespace rpmem::daemon
