// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/unique_fd.h"

namespace rpmem::daemon {

// The small files rpmemd keeps beside a pool set file (its replica state, its owner): read
// whole with a size bound, and replaced crash-safely (a temporary file, fsync, rename over the
// old one, fsync of the directory), so that a crash leaves the old text or the new one, never a
// mix. `directory` is the descriptor of the directory holding `leaf` (any, O_PATH will do);
// `path` names the file in messages.

// The file's text; nothing when it does not exist. EINVAL for anything but a regular file of
// at most `max_size` bytes; symbolic links are refused (ELOOP).
Result<std::optional<std::string>> read_small_file(int directory, const std::string& leaf,
                                                   const std::string& path, std::size_t max_size);

// Replaces the file with `text`, mode 0600. Errors say "`step` the `what` `path`".
Result<void> replace_file_durably(int directory, const std::string& leaf, std::string_view text,
                                  const std::string& path, std::string_view what);

// Unlinks the file; a missing one is no error.
Result<void> remove_small_file(int directory, const std::string& leaf, const std::string& path);

// One such file beside a pool set file: the set's name plus `suffix` (".rpmem-state"), in the
// set file's directory, with the three operations above.
class SmallFile {
public:
    // `directory`: the set file's directory; `set_leaf`: the set file's name in it;
    // `set_path`: its full path, for messages.
    SmallFile(UniqueFd directory, std::string_view set_leaf, std::string_view set_path,
              std::string_view suffix)
        : directory_(std::move(directory))
        , leaf_(std::string(set_leaf) + std::string(suffix))
        , path_(std::string(set_path) + std::string(suffix)) {}

    Result<std::optional<std::string>> read(std::size_t max_size) const {
        return read_small_file(directory_.get(), leaf_, path_, max_size);
    }
    Result<void> replace(std::string_view text, std::string_view what) const {
        return replace_file_durably(directory_.get(), leaf_, text, path_, what);
    }
    Result<void> remove() const { return remove_small_file(directory_.get(), leaf_, path_); }
    const std::string& path() const noexcept { return path_; }

private:
    UniqueFd directory_;
    std::string leaf_;
    std::string path_;
};

} // namespace rpmem::daemon
