// SPDX-License-Identifier: BSD-3-Clause
#include "result_plot.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>

#include "command.h"
#include "work_directory.h"

extern char** environ;

namespace rpmem::bench {

namespace fs = std::filesystem;

namespace {

constexpr const char* kScript = "rpmem-bench-plot";

// Installed beside rpmem-bench (bindir), and copied beside it in the build tree; else PATH.
std::string plot_script() {
    std::error_code error;
    const fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (!error) {
        const fs::path beside = self.parent_path() / kScript;
        if (fs::exists(beside, error))
            return beside.string();
    }
    return kScript;
}

} // namespace

bool is_plot_path(std::string_view path) noexcept {
    return path.size() > 4 && (path.ends_with(".svg") || path.ends_with(".png"));
}

int plot_report(const fs::path& report, const fs::path& plot, std::string_view command,
                std::ostream& err) {
    const std::string script = plot_script();
    std::vector<std::string> arguments = {script, "--output", plot.string(), report.string()};
    std::vector<char*> argv;
    for (std::string& argument : arguments)
        argv.push_back(argument.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (int spawned = ::posix_spawnp(&pid, script.c_str(), nullptr, nullptr, argv.data(), environ);
        spawned != 0) {
        err << command << ": plotting: cannot run " << script << ": " << std::strerror(spawned)
            << "\n";
        return kExitFailure;
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        // The script has said why on stderr, which it shares with us.
        err << command << ": plotting " << plot.string() << " from " << report.string()
            << " failed (" << script << " exit status "
            << (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) << ")\n";
        return kExitFailure;
    }
    return kExitOk;
}

int plot_report(const Report& report, const fs::path& plot, std::string_view command,
                std::ostream& err) {
    std::error_code error;
    fs::path parent = fs::temp_directory_path(error);
    if (error)
        parent = "/tmp";
    auto scratch = WorkDirectory::make(parent, WorkDirectory::Cleanup::always);
    if (!scratch) {
        err << command << ": plotting: " << scratch.error().message() << "\n";
        return kExitFailure;
    }
    const fs::path json = scratch->path() / "report.json";
    std::ofstream file(json);
    report.write_json(file);
    file.close();
    if (!file) {
        err << command << ": plotting: cannot write " << json.string() << "\n";
        return kExitFailure;
    }
    return plot_report(json, plot, command, err);
}

} // namespace rpmem::bench
