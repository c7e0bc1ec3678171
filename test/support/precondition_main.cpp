// SPDX-License-Identifier: BSD-3-Clause
// The Catch2 main of test executables with a precondition (see precondition.h).
#define CATCH_CONFIG_RUNNER
#include <cstdio>

#include <catch2/catch.hpp>

#include "precondition.h"

int main(int argc, char* argv[]) {
    if (const auto missing = rpmem::test::missing_precondition()) {
        std::printf("SKIP: %s\n", missing->c_str());
        return rpmem::test::kSkipped;
    }
    const int failed = Catch::Session().run(argc, argv);
    return failed == rpmem::test::kSkipped ? failed + 1 : failed; // 77 failures are no skip
}
