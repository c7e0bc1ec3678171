// SPDX-License-Identifier: BSD-3-Clause
#include "client/pmemobj_local_fields.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace rpmem::client {

namespace {

// libpmemobj's on-media format 6 (PMDK src/libpmemobj/obj.h, heap_layout.h, memblock.h),
// all little-endian on the x86-64 pools this replicates.
constexpr std::array<char, 8> kSignature{'P', 'M', 'E', 'M', 'O', 'B', 'J', '\0'};
constexpr std::size_t kMajorOffset = 8;   // pool_hdr.major
constexpr std::uint32_t kFormatMajor = 6; // OBJ_FORMAT_MAJOR
constexpr std::size_t kPoolHeaderSize = 4096;
// struct pmemobjpool: the 2 KiB persistent descriptor after the pool header, then root_offset,
// run_id, root_size, conversion_flags, heap_size, stats_persistent (8 bytes each) and
// pmem_reserved[496]; from `addr` to the end of the struct's 8 KiB it is run-time state.
constexpr std::size_t kLanesOffsetField = kPoolHeaderSize + 1024;        // pmemobjpool.lanes_offset
constexpr std::size_t kNlanesField = kPoolHeaderSize + 1024 + 8;         // pmemobjpool.nlanes
constexpr std::size_t kHeapOffsetField = kPoolHeaderSize + 1024 + 16;    // pmemobjpool.heap_offset
constexpr std::size_t kHeapSizeField = kPoolHeaderSize + 2048 + 32;      // pmemobjpool.heap_size
constexpr std::size_t kRuntimeBegin = kPoolHeaderSize + 2048 + 48 + 496; // offsetof(addr)
constexpr std::size_t kDescriptorEnd = 8192; // sizeof(struct pmemobjpool)

// The lanes (lane.h): from the end of the descriptor, 3 KiB each: the internal redo log
// (64-byte ulog header + 192), the external one (64 + 640), then the undo log. A ulog's
// `next` is the offset of its extension, rounded up to a cache line; gen_num is its 4th word.
constexpr std::size_t kLaneSize = 3072;
constexpr std::uint64_t kMaxLanes = 1024; // OBJ_NLANES
constexpr std::size_t kUndoLogInLane = 256 + 704;
constexpr std::size_t kUlogNextField = 8;
constexpr std::size_t kUlogCapacityField = 16;
constexpr std::size_t kUlogGenNumField = 24;
constexpr std::size_t kUlogHeaderSize = 64;

// The heap: a 1 KiB heap_header, then zones of a 64-byte zone_header, MAX_CHUNK 8-byte chunk
// headers and up to MAX_CHUNK chunks of 256 KiB.
constexpr std::array<char, 16> kHeapSignature{'M', 'E', 'M', 'O', 'R', 'Y', '_', 'H',
                                              'E', 'A', 'P', '_', 'H', 'D', 'R', '\0'};
constexpr std::size_t kHeapHeaderSize = 1024;
constexpr std::size_t kHeapChunkSizeField = 40;     // heap_header.chunksize
constexpr std::size_t kHeapChunksPerZoneField = 48; // heap_header.chunks_per_zone
constexpr std::uint64_t kChunkSize = 256 * 1024;
constexpr std::uint64_t kMaxChunk = 65535 - 7;
constexpr std::size_t kZoneHeaderSize = 64;
constexpr std::uint32_t kZoneMagic = 0xC3F0A2D2;
constexpr std::size_t kChunkHeaderSize = 8;
constexpr std::uint64_t kZoneMaxSize =
    kZoneHeaderSize + kChunkHeaderSize * kMaxChunk + kChunkSize * kMaxChunk;
constexpr std::uint16_t kChunkFooter = 1; // CHUNK_TYPE_FOOTER
constexpr std::uint16_t kChunkFree = 2;   // CHUNK_TYPE_FREE
constexpr std::uint16_t kChunkUsed = 3;   // CHUNK_TYPE_USED
// struct memory_block: chunk_id, zone_id, size_idx, block_off (u32), m_ops, heap (pointers),
// header_type, type (enums), cached_bitmap (pointer).
constexpr std::size_t kMemoryBlockSize = 48;
// Where container_ravl puts it: the block's user data, after its allocation header (legacy
// 64 bytes, compact 16, none 0; a stale copy may carry an older header type's offset).
constexpr std::array<std::size_t, 3> kUserDataOffsets{64, 16, 0};
constexpr std::uint64_t kUserSpaceEnd = std::uint64_t{1} << 47;

template <typename T>
T load(std::span<const std::byte> pool, std::size_t offset) {
    T value{};
    std::memcpy(&value, pool.data() + offset, sizeof value);
    return value;
}

bool overlaps(Range a, Range b) {
    return a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

// The unit an extent with local-only fields is narrowed to: the smallest digest extent.
constexpr std::size_t kPage = 4096;
// The most read from the replica at once.
constexpr std::size_t kReadBatch = std::size_t{1} << 20;

void append(std::vector<Range>& ranges, Range range) {
    if (range.length == 0)
        return;
    if (!ranges.empty() && ranges.back().offset + ranges.back().length == range.offset)
        ranges.back().length += range.length;
    else
        ranges.push_back(range);
}

std::size_t count_differing(const std::byte* a, const std::byte* b, std::size_t length) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < length; ++i)
        count += a[i] != b[i] ? 1 : 0;
    return count;
}

// Compares one extent's pages byte by byte with the local-only fields left out.
class ExtentCheck {
public:
    ExtentCheck(std::span<const std::byte> pool, std::vector<PmemobjLocalFields::Field> fields,
                const ReplicaBytes& replica, ConfirmedDifferences& result)
        : pool_(pool)
        , fields_(std::move(fields))
        , replica_(replica)
        , result_(result) {}

    bool has_field(Range page) const {
        auto field = first_field_after(page.offset);
        return field != fields_.end() && field->range.offset < page.offset + page.length;
    }

    // Reads [batch) from the replica and appends its pages that really differ.
    Result<void> read_and_compare(Range batch) {
        if (batch.length == 0)
            return {};
        buffer_.resize(batch.length);
        if (auto read = replica_.read(buffer_, batch.offset); !read)
            return read;
        result_.bytes_read += batch.length;
        for (std::size_t at = 0; at < batch.length; at += kPage)
            compare_page({batch.offset + at, std::min(kPage, batch.length - at)},
                         buffer_.data() + at);
        return {};
    }

private:
    std::vector<PmemobjLocalFields::Field>::const_iterator
    first_field_after(std::size_t offset) const {
        return std::upper_bound(fields_.begin(), fields_.end(), offset,
                                [](std::size_t at, const PmemobjLocalFields::Field& field) {
                                    return at < field.range.offset + field.range.length;
                                });
    }

    void compare_page(Range page, const std::byte* remote) {
        const std::byte* local = pool_.data() + page.offset;
        const std::size_t end = page.offset + page.length;
        bool differs = false;
        std::size_t at = page.offset;
        for (auto field = first_field_after(page.offset);
             field != fields_.end() && field->range.offset < end; ++field) {
            const std::size_t from = std::max(field->range.offset, at);
            const std::size_t to = std::min(field->range.offset + field->range.length, end);
            differs = differs || std::memcmp(local + (at - page.offset),
                                             remote + (at - page.offset), from - at) != 0;
            if (std::size_t count = count_differing(local + (from - page.offset),
                                                    remote + (from - page.offset), to - from)) {
                result_.local_only_bytes += count;
                if (result_.local_only.empty() || !(result_.local_only.back() == *field))
                    result_.local_only.push_back(*field);
            }
            at = to;
        }
        differs = differs || std::memcmp(local + (at - page.offset), remote + (at - page.offset),
                                         end - at) != 0;
        if (differs)
            append(result_.ranges, page);
    }

    std::span<const std::byte> pool_;
    std::vector<PmemobjLocalFields::Field> fields_;
    const ReplicaBytes& replica_;
    ConfirmedDifferences& result_;
    std::vector<std::byte> buffer_;
};

// One mismatching extent that holds local-only fields.
Result<void> confirm_extent(std::span<const std::byte> pool, Range extent,
                            std::vector<PmemobjLocalFields::Field> fields, std::size_t extent_size,
                            const ReplicaBytes& replica, ConfirmedDifferences& result) {
    ExtentCheck check(pool, std::move(fields), replica, result);
    // Finer digests first, when the replica offers them: then a page whose digest differs
    // and that has no local-only field differs for sure and needs no read.
    std::vector<Range> candidates{extent};
    const bool proven = replica.digests && extent_size > kPage;
    if (proven) {
        auto remote = replica.digests(extent.offset, extent.length, kPage);
        if (!remote)
            return fail(std::move(remote.error()));
        auto local = local_digests(pool, extent.offset, extent.length, kPage);
        if (!local)
            return fail(std::move(local.error()));
        candidates = differing_ranges(*local, *remote, extent, kPage);
    }
    for (const Range& candidate : candidates) {
        Range batch{candidate.offset, 0};
        const std::size_t end = candidate.offset + candidate.length;
        for (std::size_t at = candidate.offset; at < end; at += kPage) {
            const Range page{at, std::min(kPage, end - at)};
            if (proven && !check.has_field(page)) {
                if (auto done = check.read_and_compare(batch); !done)
                    return done;
                batch = {page.offset + page.length, 0};
                append(result.ranges, page);
                continue;
            }
            if (batch.length + page.length > kReadBatch) {
                if (auto done = check.read_and_compare(batch); !done)
                    return done;
                batch = {page.offset, 0};
            }
            batch.length += page.length;
        }
        if (auto done = check.read_and_compare(batch); !done)
            return done;
    }
    return {};
}

} // namespace

PmemobjLocalFields PmemobjLocalFields::of(std::span<const std::byte> pool) {
    PmemobjLocalFields fields(pool);
    if (pool.size() < kDescriptorEnd ||
        std::memcmp(pool.data(), kSignature.data(), kSignature.size()) != 0 ||
        load<std::uint32_t>(pool, kMajorOffset) != kFormatMajor)
        return fields;
    fields.is_pmemobj_ = true;

    // The heap is trusted only where its own header says it is one, at the descriptor's
    // heap_offset, with the geometry of this format.
    const auto heap_offset = load<std::uint64_t>(pool, kHeapOffsetField);
    const auto heap_size = load<std::uint64_t>(pool, kHeapSizeField);
    if (heap_offset < kDescriptorEnd || heap_offset % kPoolHeaderSize != 0 ||
        heap_offset >= pool.size() || pool.size() - heap_offset < kHeapHeaderSize)
        return fields;
    if (std::memcmp(pool.data() + heap_offset, kHeapSignature.data(), kHeapSignature.size()) != 0 ||
        load<std::uint64_t>(pool, heap_offset + kHeapChunkSizeField) != kChunkSize ||
        load<std::uint64_t>(pool, heap_offset + kHeapChunksPerZoneField) != kMaxChunk)
        return fields;
    fields.heap_offset_ = heap_offset;
    fields.heap_end_ = heap_size != 0 && heap_size <= pool.size() - heap_offset
                           ? heap_offset + heap_size
                           : pool.size();
    return fields;
}

std::vector<PmemobjLocalFields::Field> PmemobjLocalFields::within(Range range) const {
    std::vector<Field> fields;
    if (!is_pmemobj_ || range.length == 0)
        return fields;
    const Range runtime{kRuntimeBegin, kDescriptorEnd - kRuntimeBegin};
    if (overlaps(runtime, range))
        fields.push_back({runtime, Kind::descriptor_runtime});
    if (heap_offset_ != 0) {
        add_heap_fields(range, fields);
        add_undo_extension_fields(range, fields);
    }
    std::sort(fields.begin(), fields.end(),
              [](const Field& a, const Field& b) { return a.range.offset < b.range.offset; });
    // Disjoint, as callers rely on: a field overlapping its predecessor (no pool libpmemobj
    // wrote has one) is dropped, so less is left out, never more.
    std::vector<Field> disjoint;
    for (const Field& field : fields)
        if (disjoint.empty() ||
            disjoint.back().range.offset + disjoint.back().range.length <= field.range.offset)
            disjoint.push_back(field);
    return disjoint;
}

// Walks the chunk headers of each zone that `range` touches, block by block as heap boot does,
// and keeps the footers and free-block entries libpmemobj put into its mapping there.
void PmemobjLocalFields::add_heap_fields(Range range, std::vector<Field>& fields) const {
    const std::size_t zones_begin = heap_offset_ + kHeapHeaderSize;
    const std::size_t range_end = std::min(range.offset + range.length, heap_end_);
    if (range_end <= zones_begin)
        return;
    const std::size_t first_zone =
        range.offset <= zones_begin ? 0 : (range.offset - zones_begin) / kZoneMaxSize;
    const std::size_t last_zone = (range_end - 1 - zones_begin) / kZoneMaxSize;
    for (std::size_t zone = first_zone; zone <= last_zone; ++zone) {
        const std::size_t at = zones_begin + zone * kZoneMaxSize;
        const std::size_t headers = at + kZoneHeaderSize;
        const std::size_t chunks = headers + kChunkHeaderSize * kMaxChunk;
        if (chunks > heap_end_)
            return;
        if (load<std::uint32_t>(pool_, at) != kZoneMagic)
            continue; // a zone not in use yet: libpmemobj has written nothing there
        const auto zone_chunks = load<std::uint32_t>(pool_, at + 4);
        if (zone_chunks == 0 || zone_chunks > kMaxChunk ||
            (heap_end_ - chunks) / kChunkSize < zone_chunks)
            continue;
        auto slot = [&](std::uint64_t chunk) { return headers + chunk * kChunkHeaderSize; };
        auto data = [&](std::uint64_t chunk) { return chunks + chunk * kChunkSize; };
        // A copy of the memory_block for a block starting at `chunk`: names that very chunk.
        auto block_entry = [&](std::uint64_t chunk) -> std::size_t {
            for (std::size_t offset : kUserDataOffsets) {
                const std::size_t entry = data(chunk) + offset;
                const auto size_idx = load<std::uint32_t>(pool_, entry + 8);
                const auto m_ops = load<std::uint64_t>(pool_, entry + 16);
                const auto heap = load<std::uint64_t>(pool_, entry + 24);
                if (load<std::uint32_t>(pool_, entry) == chunk &&
                    load<std::uint32_t>(pool_, entry + 4) == zone && size_idx != 0 &&
                    size_idx <= zone_chunks - chunk &&
                    load<std::uint32_t>(pool_, entry + 12) == 0 && m_ops != 0 &&
                    m_ops < kUserSpaceEnd && heap != 0 && heap < kUserSpaceEnd &&
                    load<std::uint32_t>(pool_, entry + 32) <= 2 &&
                    load<std::uint32_t>(pool_, entry + 36) == 0)
                    return entry;
            }
            return 0;
        };
        std::vector<Field> footers;
        std::vector<Field> entries;
        for (std::uint64_t chunk = 0; chunk < zone_chunks;) {
            const auto type = load<std::uint16_t>(pool_, slot(chunk));
            const auto size = load<std::uint32_t>(pool_, slot(chunk) + 4);
            if (size == 0 || size > zone_chunks - chunk)
                break; // not a heap libpmemobj could boot from: trust nothing further
            if (type == kChunkFree || type == kChunkUsed) {
                // Slots inside a huge block are never read as headers; a footer there is
                // the mapping's alone (the last slot's, or a stale one from before a merge).
                for (std::uint64_t inside = chunk + 1; inside < chunk + size; ++inside) {
                    const Range footer{slot(inside), kChunkHeaderSize};
                    if (overlaps(footer, range) &&
                        load<std::uint16_t>(pool_, slot(inside)) == kChunkFooter)
                        footers.push_back({footer, Kind::chunk_footer});
                }
                for (std::uint64_t inside = chunk; inside < chunk + size; ++inside) {
                    const Range candidate{data(inside), kUserDataOffsets[0] + kMemoryBlockSize};
                    if (!overlaps(candidate, range))
                        continue;
                    if (std::size_t entry = block_entry(inside); entry != 0)
                        entries.push_back({{entry, kMemoryBlockSize}, Kind::free_block_entry});
                }
            }
            chunk += size;
        }
        fields.insert(fields.end(), footers.begin(), footers.end());
        fields.insert(fields.end(), entries.begin(), entries.end());
    }
}

// ulog_clobber_data (ulog.c) moves the generation number of a lane's first undo log extension on
// with each transaction's end, in the mapping only ("we'll never read gen_num of the second
// ulog" after an unclean end; every open frees the extensions, ULOG_FREE_AFTER_FIRST). Locally
// it keeps pace with the lane's own undo log, which is persisted: the two are equal.
void PmemobjLocalFields::add_undo_extension_fields(Range range, std::vector<Field>& fields) const {
    const auto lanes_offset = load<std::uint64_t>(pool_, kLanesOffsetField);
    const auto nlanes = load<std::uint64_t>(pool_, kNlanesField);
    if (lanes_offset != kDescriptorEnd || nlanes == 0 || nlanes > kMaxLanes ||
        lanes_offset + nlanes * kLaneSize > heap_offset_)
        return;
    for (std::uint64_t lane = 0; lane < nlanes; ++lane) {
        const std::size_t undo = lanes_offset + lane * kLaneSize + kUndoLogInLane;
        const auto next = load<std::uint64_t>(pool_, undo + kUlogNextField);
        if (next == 0 || next > heap_end_)
            continue;
        const std::size_t extension =
            (next + kUlogHeaderSize - 1) / kUlogHeaderSize * kUlogHeaderSize;
        if (extension < heap_offset_ + kHeapHeaderSize || extension > heap_end_ - kUlogHeaderSize)
            continue;
        const Range gen_num{extension + kUlogGenNumField, 8};
        if (overlaps(gen_num, range) &&
            load<std::uint64_t>(pool_, extension + kUlogCapacityField) != 0 &&
            load<std::uint64_t>(pool_, gen_num.offset) ==
                load<std::uint64_t>(pool_, undo + kUlogGenNumField))
            fields.push_back({gen_num, Kind::undo_extension_gen_num});
    }
}

std::string_view PmemobjLocalFields::describe(Kind kind) noexcept {
    switch (kind) {
    case Kind::descriptor_runtime:
        return "run-time part of the pool descriptor";
    case Kind::chunk_footer:
        return "chunk footer";
    case Kind::free_block_entry:
        return "free-block tree entry";
    case Kind::undo_extension_gen_num:
        return "undo log extension's generation number";
    }
    return "local-only field";
}

Result<ConfirmedDifferences> confirm_differences(std::span<const std::byte> pool,
                                                 const PmemobjLocalFields& local_fields,
                                                 std::span<const Range> mismatches,
                                                 std::size_t extent_size,
                                                 const ReplicaBytes& replica) {
    ConfirmedDifferences result;
    if (extent_size == 0)
        return fail(EINVAL, "extent_size: 0 is not a digest extent size");
    for (const Range& mismatch : mismatches) {
        if (mismatch.offset > pool.size() || mismatch.length > pool.size() - mismatch.offset)
            return fail(EINVAL, fmt::format("[{}, +{}) is outside the pool of {} bytes",
                                            mismatch.offset, mismatch.length, pool.size()));
        const std::size_t end = mismatch.offset + mismatch.length;
        for (std::size_t at = mismatch.offset; at < end; at += extent_size) {
            const Range extent{at, std::min(extent_size, end - at)};
            auto fields = local_fields.within(extent);
            if (fields.empty()) {
                append(result.ranges, extent);
                continue;
            }
            if (auto done =
                    confirm_extent(pool, extent, std::move(fields), extent_size, replica, result);
                !done)
                return fail(std::move(done.error()));
        }
    }
    return result;
}

} // namespace rpmem::client
