// SPDX-License-Identifier: BSD-3-Clause
#include "rpmemd/supervisor/pool_set_file.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log_text.h"
#include "rpmemd/supervisor/status_error.h"

namespace rpmem::daemon {

namespace {

using protocol::Status;

constexpr std::uint64_t kResolveFlags = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

// openat2 has no glibc wrapper on Debian 12.
int openat2_call(int directory, const char* path, std::uint64_t flags, std::uint64_t resolve) {
    struct open_how how {};
    how.flags = flags;
    how.resolve = resolve;
    for (int attempt = 0;; ++attempt) {
        long fd = ::syscall(SYS_openat2, directory, path, &how, sizeof(how));
        // EAGAIN: a concurrent rename or mount raced the lookup; the kernel asks to retry.
        if (fd < 0 && (errno == EINTR || (errno == EAGAIN && attempt < 8)))
            continue;
        return static_cast<int>(fd);
    }
}

// The error for a failed lookup step, with the status the client deserves.
Error lookup_error(int error, std::string_view name, const std::string& directory) {
    // The name is the client's: quoted escaped and bounded, in the reply and in the log.
    std::string what =
        fmt::format("pool set '{}' in the pool set directory {}", escape_for_log(name), directory);
    switch (error) {
    case EXDEV:
        return status_error(Status::bad_name,
                            what + ": the name leads outside the pool set directory");
    case ELOOP:
        return status_error(Status::bad_name, what + ": the name goes through a symbolic link");
    case ENOTDIR:
        return status_error(Status::bad_name, what + ": a component of the name is not a "
                                                     "directory");
    case ENAMETOOLONG:
        return status_error(Status::bad_name, what + ": the name or a component of it is too "
                                                     "long");
    case ENOENT:
        return status_error(Status::no_exist, what + ": no such file");
    case EACCES:
    case EPERM:
        return status_error(Status::no_access, what + ": permission denied");
    default:
        return Error::from_errno(error, "opening " + what);
    }
}

Result<UniqueFd> open_directory(const std::string& directory) {
    UniqueFd fd(::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (fd.valid())
        return fd;
    int error = errno;
    std::string what = fmt::format("pool set directory {}", directory);
    if (error == ENOENT || error == ENOTDIR)
        return fail(status_error(Status::no_exist, what + " does not exist"));
    if (error == EACCES)
        return fail(status_error(Status::no_access, what + ": permission denied"));
    return fail(Error::from_errno(error, "opening " + what));
}

// Splits "a/b/c.set" into its components ("a", "b", "c.set"), skipping empty ones ("a//b").
std::vector<std::string_view> components(std::string_view name) {
    std::vector<std::string_view> parts;
    while (!name.empty()) {
        auto slash = name.find('/');
        std::string_view part = name.substr(0, slash);
        if (!part.empty())
            parts.push_back(part);
        if (slash == std::string_view::npos)
            break;
        name.remove_prefix(slash + 1);
    }
    return parts;
}

constexpr int kFileFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

struct Located {
    UniqueFd parent;
    UniqueFd file;
};

Result<Located> locate_beneath(const UniqueFd& root, std::string_view name,
                               const std::string& directory) {
    auto parts = components(name);
    std::string parent_path;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
        parent_path += std::string(parts[i]) + "/";
    Located located;
    if (parent_path.empty())
        located.parent = UniqueFd(::fcntl(root.get(), F_DUPFD_CLOEXEC, 0));
    else
        located.parent = UniqueFd(openat2_call(root.get(), parent_path.c_str(),
                                               O_PATH | O_DIRECTORY | O_CLOEXEC, kResolveFlags));
    if (!located.parent.valid())
        return fail(lookup_error(errno, name, directory));
    std::string path(name);
    located.file = UniqueFd(openat2_call(root.get(), path.c_str(), kFileFlags, kResolveFlags));
    if (!located.file.valid())
        return fail(lookup_error(errno, name, directory));
    return located;
}

Result<Located> locate_without_symlinks(const UniqueFd& root, std::string_view name,
                                        const std::string& directory) {
    auto parts = components(name);
    Located located;
    located.parent = UniqueFd(::fcntl(root.get(), F_DUPFD_CLOEXEC, 0));
    if (!located.parent.valid())
        return fail(Error::from_errno(errno, "duplicating the pool set directory's descriptor"));
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        std::string part(parts[i]);
        // O_PATH with O_NOFOLLOW opens a symbolic link itself; fstat tells it from a directory.
        UniqueFd next(
            ::openat(located.parent.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!next.valid())
            return fail(lookup_error(errno, name, directory));
        struct stat st {};
        if (::fstat(next.get(), &st) != 0)
            return fail(lookup_error(errno, name, directory));
        if (S_ISLNK(st.st_mode))
            return fail(lookup_error(ELOOP, name, directory));
        if (!S_ISDIR(st.st_mode))
            return fail(lookup_error(ENOTDIR, name, directory));
        located.parent = std::move(next);
    }
    std::string leaf(parts.back());
    located.file = UniqueFd(::openat(located.parent.get(), leaf.c_str(), kFileFlags | O_NOFOLLOW));
    if (!located.file.valid())
        return fail(lookup_error(errno, name, directory));
    return located;
}

Result<std::string> read_text(const UniqueFd& fd, const std::string& path) {
    std::string text;
    char buffer[8192];
    for (;;) {
        ssize_t got = ::read(fd.get(), buffer, sizeof(buffer));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return fail(Error::from_errno(errno, "reading pool set file " + path));
        if (got == 0)
            return text;
        text.append(buffer, static_cast<std::size_t>(got));
        if (text.size() > kMaxPoolSetFileSize)
            return fail(status_error(Status::bad_name,
                                     fmt::format("pool set file {} is larger than {} bytes: not "
                                                 "a pool set file",
                                                 path, kMaxPoolSetFileSize)));
    }
}

} // namespace

ResolveMethod default_resolve_method() {
    static const ResolveMethod method = [] {
        UniqueFd probe(openat2_call(AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0));
        return probe.valid() || errno != ENOSYS ? ResolveMethod::beneath
                                                : ResolveMethod::no_symlinks;
    }();
    return method;
}

Result<void> check_pool_set_name(std::string_view name) {
    auto bad = [&](std::string_view why) {
        return fail(status_error(Status::bad_name, fmt::format("invalid pool set name '{}': {}",
                                                               escape_for_log(name), why)));
    };
    if (name.empty())
        return bad("it is empty");
    if (name.find('\0') != std::string_view::npos)
        return bad("it contains a NUL byte");
    if (name.front() == '/')
        return bad("it is absolute; names are relative to the pool set directory");
    if (name.back() == '/')
        return bad("it names a directory");
    for (std::string_view part : components(name)) {
        if (part == "..")
            return bad("'..' may not appear in it");
        if (part == ".")
            return bad("'.' may not appear in it");
    }
    return {};
}

Error missing_pool_set_error(const std::string& directory, std::string_view name) {
    return lookup_error(ENOENT, name, directory);
}

Result<PoolSetFile> open_pool_set_file(const std::string& directory, std::string_view name,
                                       ResolveMethod method) {
    if (auto valid = check_pool_set_name(name); !valid)
        return fail(std::move(valid.error()));
    auto root = open_directory(directory);
    if (!root)
        return fail(std::move(root.error()));
    auto located = method == ResolveMethod::beneath
                       ? locate_beneath(*root, name, directory)
                       : locate_without_symlinks(*root, name, directory);
    if (!located)
        return fail(std::move(located.error()));

    PoolSetFile file;
    file.name = std::string(name);
    file.path = directory + (directory.ends_with('/') ? "" : "/") + file.name;
    struct stat st {};
    if (::fstat(located->file.get(), &st) != 0)
        return fail(Error::from_errno(errno, "fstat of pool set file " + file.path));
    if (!S_ISREG(st.st_mode))
        return fail(
            status_error(Status::bad_name,
                         fmt::format("pool set '{}' in {}: {}", escape_for_log(name), directory,
                                     S_ISDIR(st.st_mode) ? "it is a directory, not a pool set file"
                                                         : "it is not a regular file")));
    if ((st.st_mode & S_IWOTH) != 0)
        return fail(status_error(Status::no_access,
                                 fmt::format("the target refuses pool set '{}': its file is "
                                             "writable by every user (on the target: chmod o-w "
                                             "{})",
                                             escape_for_log(name), file.path)));
    auto text = read_text(located->file, file.path);
    if (!text)
        return fail(std::move(text.error()));
    file.text = std::move(*text);
    file.device = st.st_dev;
    file.inode = st.st_ino;
    file.parent = std::move(located->parent);
    auto parts = components(name);
    file.leaf = std::string(parts.back());
    return file;
}

} // namespace rpmem::daemon
