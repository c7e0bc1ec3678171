// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

namespace rpmem::bench {

// Where every subcommand writes its report: --format json|csv, --output FILE, and the figure
// --plot FILE.svg|png draws of it.
struct OutputOptions {
    bool csv = false;
    std::string output; // empty: standard output
    std::string plot;   // empty: no figure
};

// Adds --format, --output and --plot to a subcommand.
void add_output_options(CLI::App& command, OutputOptions& options);

// A CLI11 transform for sizes in bytes: "4096", "4K", "64k", "1M", "2G" (binary multiples).
// With ->delimiter(',') on a list option it applies to each element.
CLI::Validator size_value();

// The options of the benchmarks of one replica against a private rpmemd on loopback (digest,
// resync): --provider, --pool-size (at least 2M, a multiple of 4K; `default_size` for the help),
// --pool-dir and --rpmemd.
struct LoopbackOptions {
    std::string provider = "tcp";
    std::size_t pool_size = 0;
    std::string pool_dir = "/dev/shm";
    std::filesystem::path rpmemd;
};
void add_loopback_options(CLI::App& command, LoopbackOptions& options, const char* default_size);

// The footer of the subcommands that use a pool file.
inline constexpr const char* kPoolFooter =
    "Run with PMEM_IS_PMEM_FORCE=1 unless the pool directory is persistent memory.";

} // namespace rpmem::bench
