// SPDX-License-Identifier: BSD-3-Clause
#include "process_cpu.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

namespace rpmem::bench {

namespace {

double seconds_of(const rusage& usage) noexcept {
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// utime + stime (fields 14 and 15 of /proc/PID/stat, after the parenthesised name).
double stat_cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(in, text); // one line
    const auto name_end = text.rfind(") ");
    if (name_end == std::string::npos)
        return 0;
    std::istringstream fields(text.substr(name_end + 2));
    std::string field;
    unsigned long long utime = 0;
    unsigned long long stime = 0;
    // Fields from 3 (state) on: utime is the 12th of them, stime the 13th.
    for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14)
            utime = std::stoull(field);
        else if (i == 15)
            stime = std::stoull(field);
    }
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

} // namespace

double process_cpu_seconds() noexcept {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return seconds_of(usage);
}

double thread_cpu_seconds() noexcept {
    rusage usage{};
    ::getrusage(RUSAGE_THREAD, &usage);
    return seconds_of(usage);
}

double process_tree_cpu_seconds(pid_t pid) {
    double total = stat_cpu_seconds(pid);
    std::error_code error;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
        std::ifstream children(task.path() / "children");
        pid_t child = 0;
        while (children >> child)
            total += stat_cpu_seconds(child);
    }
    return total;
}

} // namespace rpmem::bench
