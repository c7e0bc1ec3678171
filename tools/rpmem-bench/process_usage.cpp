// SPDX-License-Identifier: BSD-3-Clause
#include "process_usage.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace rpmem::bench {

namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& directory) {
    std::error_code error;
    std::size_t count = 0;
    for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error))
        ++count;
    return count;
}

// The fields of /proc/PID/stat after "(comm)", which may hold spaces: state is the first.
std::string stat_tail(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto close = text.rfind(')');
    return close == std::string::npos ? std::string() : text.substr(close + 1);
}

} // namespace

ProcessUsage ProcessUsage::of(pid_t pid) {
    ProcessUsage usage;
    const fs::path proc = "/proc/" + std::to_string(pid);
    usage.threads = entries(proc / "task");
    usage.fds = entries(proc / "fd");
    std::ifstream status(proc / "status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            usage.rss_kib = std::stoul(line.substr(6));
    // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
    char state = 0;
    long skip = 0;
    unsigned long utime = 0, stime = 0;
    const std::string tail = stat_tail(pid);
    if (std::sscanf(tail.c_str(), " %c %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %lu %lu", &state,
                    &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &utime,
                    &stime) == 13)
        usage.cpu_seconds =
            static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    return usage;
}

ProcessUsage& ProcessUsage::operator+=(const ProcessUsage& other) noexcept {
    threads += other.threads;
    fds += other.fds;
    rss_kib += other.rss_kib;
    cpu_seconds += other.cpu_seconds;
    return *this;
}

std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> children;
    std::error_code error;
    for (fs::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename();
        if (name.empty() ||
            !std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c) != 0; }))
            continue;
        const pid_t pid = static_cast<pid_t>(std::stoi(name));
        char state = 0;
        int ppid = 0;
        if (std::sscanf(stat_tail(pid).c_str(), " %c %d", &state, &ppid) == 2 && ppid == parent)
            children.push_back(pid);
    }
    return children;
}

ProcessUsage usage_with_children(pid_t pid) {
    ProcessUsage total = ProcessUsage::of(pid);
    for (pid_t child : children_of(pid))
        total += ProcessUsage::of(child);
    return total;
}

} // namespace rpmem::bench
