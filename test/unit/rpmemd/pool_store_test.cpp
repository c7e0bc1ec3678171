// SPDX-License-Identifier: BSD-3-Clause
// PoolStore on real files in a scratch directory: name resolution beneath the pool set
// directory (both methods), create/open/set_attr/close/remove with PMDK rpmemd's rules, the
// status each failure answers with, locking, and the headers a create writes.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "pool_fixtures.h"
#include "poolset/parser.h"
#include "poolset/pool_header.h"
#include "poolset/pool_mapping.h"
#include "rpmemd/supervisor/pool_owner_file.h"
#include "rpmemd/supervisor/pool_set_file.h"
#include "rpmemd/supervisor/pool_store.h"
#include "rpmemd/supervisor/status_error.h"
#include "temp_dir.h"

using namespace rpmem;
using namespace rpmem::daemon;
using protocol::Status;
using test::TempDir;

namespace {

template <typename T>
Status status_of_failure(const Result<T>& result) {
    REQUIRE_FALSE(result);
    return reply_status_for(result.error());
}

PoolStore store_in(const TempDir& dir, ResolveMethod method = default_resolve_method()) {
    return PoolStore((dir.path() / "sets").string(), {}, method);
}

std::string sets(const TempDir& dir) {
    return (dir.path() / "sets").string();
}

std::vector<poolset::PoolHeader> read_part_headers(const std::vector<std::string>& paths) {
    std::vector<poolset::PoolHeader> headers;
    for (const auto& path : paths) {
        std::ifstream in(path, std::ios::binary);
        poolset::PoolHeader::Bytes bytes{};
        in.read(reinterpret_cast<char*>(bytes.data()), bytes.size());
        REQUIRE(in.gcount() == static_cast<std::streamsize>(bytes.size()));
        headers.push_back(poolset::PoolHeader::decode(bytes));
    }
    return headers;
}

bool exists(const std::string& path) {
    return std::filesystem::exists(path);
}

} // namespace

TEST_CASE("this kernel resolves with openat2") {
    // Linux 5.6 and later (Debian 12 has 6.1): both methods are then tested below. A kernel
    // or a container's system call filter without it leaves rpmemd on the walk alone.
    CHECK(default_resolve_method() == ResolveMethod::beneath);
}

TEST_CASE("pool set names resolve strictly beneath the pool set directory") {
    TempDir dir;
    ResolveMethod method = GENERATE(ResolveMethod::beneath, ResolveMethod::no_symlinks);
    CAPTURE(method == ResolveMethod::beneath ? "openat2" : "walk");
    // A valid set outside the directory that no name may reach.
    std::string outside_set =
        dir.write("outside/real.set", test::pool_set_text(dir.path() / "outside", "part", 1));
    dir.write("sets/ok.set", test::pool_set_text(dir.path(), "ok", 1));
    std::filesystem::create_directories(dir.path() / "sets/sub");
    std::filesystem::create_symlink(outside_set, dir.path() / "sets/link-out.set");
    std::filesystem::create_symlink("../outside/real.set", dir.path() / "sets/relative-out.set");
    std::filesystem::create_symlink(dir.path() / "outside", dir.path() / "sets/dir-out");
    std::filesystem::create_symlink("ok.set", dir.path() / "sets/link-in.set");

    SECTION("the form of a name") {
        for (const char* name :
             {"", "/etc/passwd", "../outside/real.set", "sub/../ok.set", "./ok.set", "sub/"}) {
            CAPTURE(name);
            auto file = open_pool_set_file(sets(dir), name, method);
            CHECK(status_of_failure(file) == Status::bad_name);
        }
        auto nul = open_pool_set_file(sets(dir), std::string_view("ok.set\0x", 8), method);
        CHECK(status_of_failure(nul) == Status::bad_name);
        auto absolute = open_pool_set_file(sets(dir), sets(dir) + "/ok.set", method);
        CHECK(status_of_failure(absolute) == Status::bad_name);
        CHECK_THAT(absolute.error().message(), Catch::Contains("absolute"));
    }
    SECTION("symbolic links leading out are refused") {
        for (const char* name : {"link-out.set", "relative-out.set", "dir-out/real.set"}) {
            CAPTURE(name);
            auto file = open_pool_set_file(sets(dir), name, method);
            CHECK(status_of_failure(file) == Status::bad_name);
        }
    }
    SECTION("a symbolic link staying beneath passes only with openat2") {
        auto file = open_pool_set_file(sets(dir), "link-in.set", method);
        if (method == ResolveMethod::beneath) {
            REQUIRE(file);
            CHECK(file->text == test::pool_set_text(dir.path(), "ok", 1));
            CHECK(file->leaf == "link-in.set");
        } else {
            CHECK(status_of_failure(file) == Status::bad_name);
        }
    }
    SECTION("what a name finds") {
        CHECK(status_of_failure(open_pool_set_file(sets(dir), "missing.set", method)) ==
              Status::no_exist);
        CHECK(status_of_failure(open_pool_set_file(sets(dir), "sub", method)) == Status::bad_name);
        CHECK(status_of_failure(open_pool_set_file(sets(dir) + "/nowhere", "ok.set", method)) ==
              Status::no_exist);
        dir.write("sets/open.set", "PMEMPOOLSET\n", 0666);
        auto writable = open_pool_set_file(sets(dir), "open.set", method);
        CHECK(status_of_failure(writable) == Status::no_access);
        CHECK_THAT(writable.error().message(), Catch::Contains("writable by every user"));
        REQUIRE(::mkfifo((dir.path() / "sets/fifo.set").c_str(), 0600) == 0);
        CHECK(status_of_failure(open_pool_set_file(sets(dir), "fifo.set", method)) ==
              Status::bad_name); // and no hang on the FIFO
        auto found = open_pool_set_file(sets(dir), "sub//../ok.set", method);
        CHECK(status_of_failure(found) == Status::bad_name);
        dir.write("sets/sub/deep.set", "PMEMPOOLSET\n");
        auto deep = open_pool_set_file(sets(dir), "sub//deep.set", method);
        REQUIRE(deep);
        CHECK(deep->leaf == "deep.set");
        CHECK(deep->path == sets(dir) + "/sub//deep.set");
    }
    SECTION("a store refuses them as well and creates nothing outside") {
        PoolStore store = store_in(dir, method);
        auto created =
            store.create({"alice", "dir-out/real.set", 0, 1}, test::pmemobj_attributes());
        CHECK(status_of_failure(created) == Status::bad_name);
        CHECK_FALSE(exists(dir / "outside/part.0"));
        auto removed = store.remove("alice", "link-out.set", {true, true});
        CHECK(status_of_failure(removed) == Status::bad_name);
        CHECK(exists(outside_set));
    }
}

TEST_CASE("create writes the headers PMDK's rpmemd wrote, open returns the attributes") {
    TempDir dir;
    bool single = GENERATE(false, true);
    CAPTURE(single);
    dir.write("sets/pool.set",
              test::pool_set_text(dir.path(), "pool", 3, "2M", single ? "SINGLEHDR" : ""));
    PoolStore store = store_in(dir);
    PoolAttributes attributes = test::pmemobj_attributes(single);

    auto pool = store.create({"alice", "pool.set", 4 << 20, 1}, attributes);
    REQUIRE(pool);
    CHECK((*pool)->created());
    CHECK((*pool)->has_headers());
    CHECK((*pool)->attributes() == attributes);
    // Net size: 3 x 2 MiB, minus a header page per part after the first unless SINGLEHDR.
    CHECK((*pool)->mapping().size() == (6u << 20) - (single ? 0 : 2 * 4096));

    std::vector<std::string> parts = {dir / "pool.0", dir / "pool.1", dir / "pool.2"};
    for (const auto& part : parts) {
        struct stat st {};
        REQUIRE(::stat(part.c_str(), &st) == 0);
        CHECK((st.st_mode & 07777) == 0600);
    }
    REQUIRE(store.close(std::move(*pool), false));

    auto headers = read_part_headers(single ? std::vector<std::string>{parts[0]} : parts);
    std::size_t count = headers.size();
    // What PMDK's util_header_create put there, field by field.
    test::check_created_headers(headers, attributes);
    for (std::size_t p = 0; p < count; ++p) {
        CAPTURE(p);
        CHECK(headers[p].crtime > 0);
    }
    // SDS: marked dirty by create, cleared by the clean close.
    CHECK(headers[0].sds.dirty == 0);
    CHECK(headers[0].sds.checksum == headers[0].sds.compute_checksum());

    // And byte for byte what build_target_headers makes with the same UUIDs and times.
    auto set = poolset::parse(
        test::pool_set_text(dir.path(), "pool", 3, "2M", single ? "SINGLEHDR" : ""), "pool.set");
    REQUIRE(set);
    std::vector<std::uint64_t> times;
    for (std::size_t p = 0; p < 3; ++p)
        times.push_back(p < count ? headers[p].crtime : 0);
    std::size_t next = 0;
    auto expected = poolset::build_target_headers(*set, attributes, times, [&] {
        // build_target_headers draws one UUID per header part, then puts attributes.uuid first.
        return headers[next++ % count].uuid;
    });
    REQUIRE(expected);
    REQUIRE(expected->size() == count);
    for (std::size_t p = 0; p < count; ++p) {
        poolset::PoolHeader want = (*expected)[p];
        poolset::set_shutdown_dirty(want, false); // as the close left it
        CHECK(want.encode() == headers[p].encode());
    }

    auto reopened = store.open({"alice", "pool.set", 4 << 20, 2});
    REQUIRE(reopened);
    CHECK_FALSE((*reopened)->created());
    CHECK((*reopened)->attributes() == attributes);
}

TEST_CASE("attributes and the set's options must agree") {
    TempDir dir;
    PoolStore store = store_in(dir);
    dir.write("sets/hdrs.set", test::pool_set_text(dir.path(), "hdrs", 1));
    dir.write("sets/nohdrs.set", test::pool_set_text(dir.path(), "nohdrs", 1, "2M", "NOHDRS"));
    dir.write("sets/single.set", test::pool_set_text(dir.path(), "single", 1, "2M", "SINGLEHDR"));

    SECTION("zero attributes need NOHDRS") {
        CHECK(status_of_failure(store.create({"a", "hdrs.set", 0, 1}, {})) == Status::pool_config);
        auto pool = store.create({"a", "nohdrs.set", 0, 1}, {});
        REQUIRE(pool);
        CHECK_FALSE((*pool)->has_headers());
        CHECK((*pool)->attributes().is_zero());
        REQUIRE(store.close(std::move(*pool), false));
        auto reopened = store.open({"a", "nohdrs.set", 0, 2});
        REQUIRE(reopened);
        CHECK((*reopened)->attributes().is_zero());
        // No header to rewrite.
        auto set = store.set_attributes(**reopened, test::pmemobj_attributes());
        CHECK(status_of_failure(set) == Status::not_supported);
    }
    SECTION("attributes with NOHDRS, and SINGLEHDR mismatches, are refused before any file") {
        CHECK(status_of_failure(store.create({"a", "nohdrs.set", 0, 1},
                                             test::pmemobj_attributes())) == Status::pool_config);
        CHECK(status_of_failure(
                  store.create({"a", "single.set", 0, 1}, test::pmemobj_attributes(false))) ==
              Status::pool_config);
        CHECK(status_of_failure(store.create(
                  {"a", "hdrs.set", 0, 1}, test::pmemobj_attributes(true))) == Status::pool_config);
        CHECK_FALSE(exists(dir / "nohdrs.0"));
        CHECK_FALSE(exists(dir / "single.0"));
        CHECK_FALSE(exists(dir / "hdrs.0"));
    }
}

TEST_CASE("each store failure answers with its status") {
    TempDir dir;
    PoolStore store = store_in(dir);
    auto attributes = test::pmemobj_attributes();
    dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 2));

    SECTION("exists: a part holds data") {
        dir.write("pool.1", std::string(2 << 20, 'x'), 0600);
        auto pool = store.create({"a", "pool.set", 0, 1}, attributes);
        CHECK(status_of_failure(pool) == Status::exists);
        CHECK_FALSE(exists(dir / "pool.0")); // what create made is gone again
        CHECK(exists(dir / "pool.1"));
    }
    SECTION("exists: the pool was created before") {
        REQUIRE(store.close(*store.create({"a", "pool.set", 0, 1}, attributes), false));
        CHECK(status_of_failure(store.create({"a", "pool.set", 0, 2}, attributes)) ==
              Status::exists);
    }
    SECTION("a part file present with zeros is taken over") {
        dir.write("pool.0", std::string(2 << 20, '\0'), 0644);
        auto pool = store.create({"a", "pool.set", 0, 1}, attributes);
        REQUIRE(pool);
        CHECK_FALSE((*pool)->mapping().created_parts()[0]);
        CHECK((*pool)->mapping().created_parts()[1]);
    }
    SECTION("no_exist: parts missing on open, set missing") {
        CHECK(status_of_failure(store.open({"a", "pool.set", 0, 1})) == Status::no_exist);
        CHECK(status_of_failure(store.open({"a", "other.set", 0, 1})) == Status::no_exist);
        dir.write("sets/nodir.set", "PMEMPOOLSET\n2M " + (dir / "nodir/part").string() + "\n");
        CHECK(status_of_failure(store.create({"a", "nodir.set", 0, 1}, attributes)) ==
              Status::no_exist);
    }
    SECTION("bad_size: the remote pool is smaller than the initiator's") {
        auto too_big = store.create({"a", "pool.set", 5u << 20, 1}, attributes);
        CHECK(status_of_failure(too_big) == Status::bad_size);
        CHECK_FALSE(exists(dir / "pool.0"));
        REQUIRE(
            store.close(*store.create({"a", "pool.set", (4u << 20) - 4096, 1}, attributes), false));
        CHECK(status_of_failure(store.open({"a", "pool.set", (4u << 20) - 4095, 1})) ==
              Status::bad_size);
        CHECK(store.open({"a", "pool.set", (4u << 20) - 4096, 1}));
    }
    SECTION("pool_config: sets rpmemd cannot serve") {
        dir.write("sets/replica.set", test::pool_set_text(dir.path(), "r", 1) + "REPLICA\n" +
                                          "2M " + (dir / "r.replica").string() + "\n");
        dir.write("sets/remote.set",
                  test::pool_set_text(dir.path(), "rr", 1) + "REPLICA host remote.set\n");
        dir.write("sets/small.set", "PMEMPOOLSET\n1M " + (dir / "small").string() + "\n");
        dir.write("sets/garbage.set", "this is not a pool set\n");
        for (const char* name : {"replica.set", "remote.set", "small.set", "garbage.set"}) {
            CAPTURE(name);
            CHECK(status_of_failure(store.create({"a", name, 0, 1}, attributes)) ==
                  Status::pool_config);
            CHECK(status_of_failure(store.open({"a", name, 0, 1})) == Status::pool_config);
        }
    }
    SECTION("pool_config: headers that do not check out") {
        REQUIRE(store.close(*store.create({"a", "pool.set", 0, 1}, attributes), false));
        std::fstream part(dir / "pool.1", std::ios::in | std::ios::out | std::ios::binary);
        part.seekp(0);
        part.put('X'); // signature of part 1 differs from part 0's; checksum wrong too
        part.close();
        CHECK(status_of_failure(store.open({"a", "pool.set", 0, 1})) == Status::pool_config);
    }
    SECTION("fatal: a part path through a regular file") {
        dir.write("file", "x");
        dir.write("sets/notdir.set", "PMEMPOOLSET\n2M " + (dir / "file/part").string() + "\n");
        CHECK(status_of_failure(store.create({"a", "notdir.set", 0, 1}, attributes)) ==
              Status::fatal);
    }
}

TEST_CASE("a pool in use is busy for every other create, open and remove of its identity") {
    TempDir dir;
    PoolStore store = store_in(dir);
    auto attributes = test::pmemobj_attributes();
    dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 1));
    // Another set file listing the same part: only the part's lock can tell.
    dir.write("sets/alias.set", test::pool_set_text(dir.path(), "pool", 1));

    auto pool = store.create({"a", "pool.set", 0, 1}, attributes);
    REQUIRE(pool);
    CHECK(status_of_failure(store.open({"a", "pool.set", 0, 2})) == Status::busy);
    CHECK(status_of_failure(store.create({"a", "pool.set", 0, 2}, attributes)) == Status::busy);
    CHECK(status_of_failure(store.remove("a", "pool.set", {true, false})) == Status::busy);
    CHECK_THAT(store.open({"a", "pool.set", 0, 2}).error().message(), Catch::Contains("session 1"));
    // The alias is nobody's set: refused before its lock is looked at.
    CHECK(status_of_failure(store.open({"a", "alias.set", 0, 2})) == Status::no_exist);
    // Another identity is not even told that it is in use.
    CHECK(status_of_failure(store.open({"b", "pool.set", 0, 2})) == Status::no_exist);
    // A second daemon process (here: a second store) meets the part files' flock.
    PoolStore other = store_in(dir);
    CHECK(status_of_failure(other.open({"a", "pool.set", 0, 2})) == Status::busy);
    // The registry lists it.
    auto in_use = store.pools_in_use();
    REQUIRE(in_use.size() == 1);
    CHECK(in_use[0].name == "pool.set");
    CHECK(in_use[0].session == 1);

    REQUIRE(store.close(std::move(*pool), false));
    CHECK(store.pools_in_use().empty());
    CHECK(store.open({"a", "pool.set", 0, 2}));
}

TEST_CASE("set_attributes rewrites the headers; open returns the new attributes") {
    TempDir dir;
    PoolStore store = store_in(dir);
    dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 2));
    auto pool = store.create({"a", "pool.set", 0, 1}, test::pmemobj_attributes());
    REQUIRE(pool);

    PoolAttributes changed = test::pmemobj_attributes();
    changed.uuid[0] = 0xAA;
    changed.next_uuid[0] = 0xBB;
    changed.prev_uuid[0] = 0xCC;
    changed.ro_compat_features = 0;
    CHECK(status_of_failure(store.set_attributes(**pool, {})) == Status::invalid_request);
    REQUIRE(store.set_attributes(**pool, changed));
    CHECK((*pool)->attributes() == changed);
    REQUIRE(store.close(std::move(*pool), false));

    auto reopened = store.open({"a", "pool.set", 0, 2});
    REQUIRE(reopened);
    CHECK((*reopened)->attributes() == changed);
    auto headers = read_part_headers({dir / "pool.0", dir / "pool.1"});
    CHECK(headers[1].prev_part_uuid == changed.uuid);
    CHECK(headers[1].next_part_uuid == changed.uuid);
}

TEST_CASE("close with remove and remove delete the parts, and the set file when asked") {
    TempDir dir;
    PoolStore store = store_in(dir);
    auto attributes = test::pmemobj_attributes();
    std::string set_file = dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 2));

    SECTION("close with remove") {
        REQUIRE(store.close(*store.create({"a", "pool.set", 0, 1}, attributes), true));
        CHECK_FALSE(exists(dir / "pool.0"));
        CHECK_FALSE(exists(dir / "pool.1"));
        CHECK(exists(set_file));
        CHECK_FALSE(exists(set_file + ".rpmem-owner"));
        CHECK(store.pools_in_use().empty());
    }
    SECTION("remove, force and the set file") {
        REQUIRE(store.close(*store.create({"a", "pool.set", 0, 1}, attributes), false));
        std::filesystem::remove(dir / "pool.1");
        CHECK(status_of_failure(store.remove("a", "pool.set", {false, false})) == Status::no_exist);
        REQUIRE(store.remove("a", "pool.set", {true, false}));
        CHECK_FALSE(exists(dir / "pool.0"));
        CHECK(exists(set_file));
        CHECK_FALSE(exists(set_file + ".rpmem-owner"));
        // Nobody's now: only the operator's local removal (rpmemd --remove) takes it.
        CHECK(status_of_failure(store.remove("a", "pool.set", {true, true})) == Status::no_exist);
        REQUIRE(store.remove("", "pool.set", {true, true}));
        CHECK_FALSE(exists(set_file));
        CHECK(status_of_failure(store.remove("a", "pool.set", {true, true})) == Status::no_exist);
    }
    SECTION("a set file in a subdirectory") {
        std::string nested =
            dir.write("sets/sub/nested.set", test::pool_set_text(dir.path(), "nested", 1));
        REQUIRE(store.close(*store.create({"a", "sub/nested.set", 0, 1}, attributes), false));
        CHECK(exists(dir / "nested.0"));
        REQUIRE(store.remove("a", "sub/nested.set", {false, true}));
        CHECK_FALSE(exists(dir / "nested.0"));
        CHECK_FALSE(exists(nested));
        CHECK(std::filesystem::exists(dir.path() / "sets/sub"));
    }
}

TEST_CASE("a client identity may have its own pool set directory") {
    TempDir dir;
    dir.write("sets/pool.set", test::pool_set_text(dir.path(), "shared", 1));
    dir.write("bob/pool.set", test::pool_set_text(dir.path(), "bob", 1));
    PoolStore store(sets(dir), {{"bob", dir / "bob"}}, default_resolve_method());
    CHECK(store.directory_for("alice") == sets(dir));
    CHECK(store.directory_for("bob") == dir / "bob");
    auto pool = store.create({"bob", "pool.set", 0, 1}, test::pmemobj_attributes());
    REQUIRE(pool);
    CHECK(exists(dir / "bob.0"));
    CHECK_FALSE(exists(dir / "shared.0"));
    auto in_use = store.pools_in_use();
    REQUIRE(in_use.size() == 1);
    CHECK(in_use[0].directory == dir / "bob");
}

TEST_CASE("each pool set is its creator's: others get the answer of a missing set") {
    TempDir dir;
    PoolStore store = store_in(dir);
    auto attributes = test::pmemobj_attributes();
    std::string set_file = dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 1));
    REQUIRE(store.close(*store.create({"alice", "pool.set", 0, 1}, attributes), false));
    CHECK_THAT(dir.read("sets/pool.set.rpmem-owner"), Catch::Contains("owner = 616c696365"));

    auto messages = [&] {
        std::vector<std::pair<Status, std::string>> seen;
        for (const Error& error : {store.open({"bob", "pool.set", 0, 2}).error(),
                                   store.create({"bob", "pool.set", 0, 2}, attributes).error(),
                                   store.remove("bob", "pool.set", {true, true}).error()})
            seen.emplace_back(reply_status_for(error), error.message());
        return seen;
    };
    auto refused = messages();
    std::filesystem::rename(set_file, set_file + ".away");
    auto missing = messages();
    std::filesystem::rename(set_file + ".away", set_file);
    CHECK(refused == missing);
    CHECK(missing[0].first == Status::no_exist);
    CHECK(exists(set_file));
    CHECK(exists(dir / "pool.0"));
    CHECK(store.open({"alice", "pool.set", 0, 2}));
}

TEST_CASE("a pool set with no owner recorded is refused, or adopted when configured") {
    TempDir dir;
    auto attributes = test::pmemobj_attributes();
    std::string set_file = dir.write("sets/pool.set", test::pool_set_text(dir.path(), "pool", 1));
    {
        PoolStore store = store_in(dir);
        REQUIRE(store.close(*store.create({"alice", "pool.set", 0, 1}, attributes), false));
    }
    // As a pool made before owners were recorded.
    std::filesystem::remove(set_file + ".rpmem-owner");

    SECTION("refused by default, to every identity") {
        PoolStore store = store_in(dir);
        CHECK(status_of_failure(store.open({"alice", "pool.set", 0, 2})) == Status::no_exist);
        CHECK(status_of_failure(store.remove("alice", "pool.set", {})) == Status::no_exist);
        // A create records its creator, and refuses the data that is there.
        CHECK(status_of_failure(store.create({"alice", "pool.set", 0, 2}, attributes)) ==
              Status::exists);
        CHECK_FALSE(exists(set_file + ".rpmem-owner"));
    }
    SECTION("unowned-pool-sets = adopt: the first identity to open it owns it") {
        PoolStore store((dir.path() / "sets").string(), {}, default_resolve_method(),
                        PoolTenancy{{}, true});
        auto opened = store.open({"alice", "pool.set", 0, 2});
        REQUIRE(opened);
        REQUIRE(store.close(std::move(*opened), false));
        CHECK_THAT(dir.read("sets/pool.set.rpmem-owner"), Catch::Contains("owner = 616c696365"));
        CHECK(status_of_failure(store.open({"bob", "pool.set", 0, 2})) == Status::no_exist);
    }
    SECTION("a shared set needs no owner") {
        PoolTenancy tenancy;
        tenancy.shared["pool.set"] = {"alice", "bob"};
        PoolStore store((dir.path() / "sets").string(), {}, default_resolve_method(), tenancy);
        CHECK(store.open({"bob", "pool.set", 0, 2}));
        CHECK(status_of_failure(store.open({"carol", "pool.set", 0, 3})) == Status::no_exist);
    }
}

TEST_CASE("the owner record round-trips any identity and refuses malformed files") {
    for (std::string identity : {std::string("alice"), std::string("a b\nc\x01\xff=#", 9)}) {
        auto parsed = parse_pool_owner(format_pool_owner(identity), "f");
        REQUIRE(parsed);
        CHECK(*parsed == identity);
    }
    CHECK_FALSE(parse_pool_owner("", "f"));
    CHECK_FALSE(parse_pool_owner("owner = 6", "f"));
    CHECK_FALSE(parse_pool_owner("owner = zz", "f"));
    CHECK_FALSE(parse_pool_owner("owner = 61\nowner = 62\n", "f"));
    CHECK_FALSE(parse_pool_owner("who = 61\n", "f"));
}
