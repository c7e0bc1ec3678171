// SPDX-License-Identifier: BSD-3-Clause
// Replays a fuzz target's corpus without libFuzzer, so every build (gcc included) runs each seed
// through the target as a regular test. Arguments: files or directories of inputs.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int replay_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        return 1;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    int failures = 0;
    std::size_t inputs = 0;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path root(argv[i]);
        if (std::filesystem::is_directory(root)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
                if (entry.is_regular_file()) {
                    failures += replay_file(entry.path());
                    ++inputs;
                }
            }
        } else {
            failures += replay_file(root);
            ++inputs;
        }
    }
    std::printf("replayed %zu inputs\n", inputs);
    if (inputs == 0) {
        std::fprintf(stderr, "no corpus inputs found: an empty corpus tests nothing\n");
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
