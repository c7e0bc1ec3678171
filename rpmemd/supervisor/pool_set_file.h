// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "base/error.h"
#include "base/unique_fd.h"

namespace rpmem::daemon {

// How a pool set name is resolved beneath its directory.
enum class ResolveMethod {
    // openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): the kernel refuses any step, `..` or
    // symbolic link (relative or absolute) that would leave the directory, and lets symbolic
    // links that stay beneath it through. Linux 5.6 and later.
    beneath,
    // A walk over the name's components with O_NOFOLLOW at every step: refuses every symbolic
    // link, also those that would stay beneath. For kernels without openat2.
    no_symlinks,
};

// openat2's method when this kernel has the system call, else the walk.
ResolveMethod default_resolve_method();

// The largest set file read; pool set files are a few lines long.
inline constexpr std::size_t kMaxPoolSetFileSize = 1u << 20;

// A pool set file found strictly beneath a pool set directory and read: its text, where it is
// (for messages and for unlinking it), and its identity (device and inode), which names the
// pool in the daemon's registry of pools in use. Owns the descriptor of the directory holding
// the file. Move-only value; not thread-safe.
struct PoolSetFile {
    std::string name; // the name the client gave, relative to the pool set directory
    std::string path; // directory/name, for messages and as the parser's origin
    std::string text; // the file's contents
    dev_t device = 0; // st_dev of the file
    ino_t inode = 0;  // st_ino of the file
    UniqueFd parent;  // the directory that holds the file (O_PATH)
    std::string leaf; // the file's name within `parent`
};

// Checks the form of a client's pool set name without I/O: not empty, not absolute, no NUL
// byte, no `.` or `..` component, no trailing '/'. Errors answer with Status::bad_name.
Result<void> check_pool_set_name(std::string_view name);

// Resolves `name` beneath `directory` with `method` and reads the file. Errors, each naming
// the name and the directory, and each carrying the status to answer with (status_error.h):
// a bad form, a path leaving the directory, or (no_symlinks) any symbolic link: bad_name;
// missing file or directory: no_exist; no permission, or a set file writable by others (anyone
// could point its parts anywhere): no_access; not a regular file, or larger than
// kMaxPoolSetFileSize: bad_name; other I/O errors: their errno.
// The error open_pool_set_file gives for a name that does not exist beneath `directory`: also
// the answer to an identity that asks for a pool set it may not see, so that a refusal tells it
// nothing a missing set would not.
Error missing_pool_set_error(const std::string& directory, std::string_view name);

Result<PoolSetFile> open_pool_set_file(const std::string& directory, std::string_view name,
                                       ResolveMethod method);

} // namespace rpmem::daemon
