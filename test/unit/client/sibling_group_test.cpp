// SPDX-License-Identifier: BSD-3-Clause
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "client/sibling_group.h"

using rpmem::client::SiblingGroup;

namespace {

// A member that records what its siblings posted to it, and takes it or not.
struct RecordingMember : SiblingGroup::FanOutMember {
    struct Post {
        std::size_t offset;
        std::size_t length;
        unsigned lane;
    };
    bool takes = true;
    std::vector<Post> posts;

    bool post_ahead(std::size_t offset, std::size_t length, unsigned lane) override {
        posts.push_back({offset, length, lane});
        return takes;
    }
};

} // namespace

TEST_CASE("a persist is posted to every sibling but the caller") {
    auto group = std::make_shared<SiblingGroup>(0, true);
    RecordingMember a, b, c;
    SiblingGroup::Membership in_a(group, a), in_b(group, b), in_c(group, c);
    c.takes = false;
    CHECK(in_a.post_to_siblings(4096, 64, 3) == 1); // b took it, c declined
    CHECK(a.posts.empty());
    REQUIRE(b.posts.size() == 1);
    CHECK(b.posts[0].offset == 4096);
    CHECK(b.posts[0].length == 64);
    CHECK(b.posts[0].lane == 3);
    CHECK(c.posts.size() == 1);
}

TEST_CASE("a member that left is never posted to; fan-out off posts nothing") {
    auto group = std::make_shared<SiblingGroup>(0, true);
    RecordingMember a, b;
    SiblingGroup::Membership in_a(group, a);
    { SiblingGroup::Membership in_b(group, b); }
    CHECK(in_a.post_to_siblings(0, 8, 0) == 0);
    CHECK(b.posts.empty());

    auto off = std::make_shared<SiblingGroup>(0, false);
    RecordingMember x, y;
    SiblingGroup::Membership in_x(off, x), in_y(off, y);
    CHECK(in_x.post_to_siblings(0, 8, 0) == 0);
    CHECK(y.posts.empty());
}

TEST_CASE("the group's quorum counts its members") {
    auto group = std::make_shared<SiblingGroup>(1, true);
    rpmem::client::SyncQuorum::Member one(group->quorum()), two(group->quorum());
    CHECK(one.describe() == "2 of 2 replicas in sync, at least 1 required");
}
