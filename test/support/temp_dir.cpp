// SPDX-License-Identifier: BSD-3-Clause
#include "temp_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/stat.h>

namespace rpmem::test {

TempDir::TempDir(std::string_view prefix) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + ".XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path TempDir::write(std::string_view name, std::string_view text) const {
    std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out)
        throw std::runtime_error("writing " + file.string());
    return file;
}

std::filesystem::path TempDir::write(std::string_view name, std::string_view text,
                                     mode_t mode) const {
    std::filesystem::path file = write(name, text);
    if (::chmod(file.c_str(), mode) != 0)
        throw std::runtime_error("chmod " + file.string() + ": " + std::strerror(errno));
    return file;
}

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string TempDir::read(std::string_view name) const {
    const std::filesystem::path file = path_ / name;
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw std::runtime_error("reading " + file.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string TempDir::expand(std::string_view text) const {
    std::string out;
    for (char c : text) {
        if (c == '@')
            out += path_.string();
        else
            out += c;
    }
    return out;
}

WorkingDirectory::WorkingDirectory(const std::filesystem::path& directory)
    : previous_(std::filesystem::current_path()) {
    std::filesystem::current_path(directory);
}

WorkingDirectory::~WorkingDirectory() {
    std::error_code ignored; // the previous directory may be gone; nothing to do about it here
    std::filesystem::current_path(previous_, ignored);
}

} // namespace rpmem::test
