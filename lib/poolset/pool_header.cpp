// SPDX-License-Identifier: BSD-3-Clause
#include "poolset/pool_header.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <sys/random.h>
#include <sys/types.h>

#include "base/little_endian.h"

namespace rpmem::poolset {

namespace {

// Offsets of struct pool_hdr (PMDK 1.12, x86-64).
constexpr std::size_t kSignatureOffset = 0;
constexpr std::size_t kMajorOffset = 8;
constexpr std::size_t kCompatOffset = 12;
constexpr std::size_t kIncompatOffset = 16;
constexpr std::size_t kRoCompatOffset = 20;
constexpr std::size_t kPoolsetUuidOffset = 24;
constexpr std::size_t kUuidOffset = 40;
constexpr std::size_t kPrevPartOffset = 56;
constexpr std::size_t kNextPartOffset = 72;
constexpr std::size_t kPrevReplOffset = 88;
constexpr std::size_t kNextReplOffset = 104;
constexpr std::size_t kCrtimeOffset = 120;
constexpr std::size_t kArchFlagsOffset = 128;
constexpr std::size_t kUnusedOffset = 144;
constexpr std::size_t kUnused2Offset = 2048;
constexpr std::size_t kSdsOffset = 4024;
constexpr std::size_t kChecksumOffset = 4088;
constexpr std::size_t kChecksum2KEnd = 2048;

// struct shutdown_state, relative to kSdsOffset.
constexpr std::size_t kSdsSize = 64;
constexpr std::size_t kSdsUscOffset = 0;
constexpr std::size_t kSdsUuidOffset = 8;
constexpr std::size_t kSdsDirtyOffset = 16;
constexpr std::size_t kSdsReservedOffset = 17;
constexpr std::size_t kSdsChecksumOffset = 56;

static_assert(kUnusedOffset + PoolHeader::kUnusedSize == kUnused2Offset);
static_assert(kUnused2Offset + PoolHeader::kUnused2Size == kSdsOffset);
static_assert(kSdsOffset + kSdsSize == kChecksumOffset);

template <typename T>
void put_le(std::span<std::uint8_t> out, std::size_t offset, T value) {
    store_le(out.subspan(offset, sizeof(T)).data(), value);
}

template <typename T>
T get_le(std::span<const std::uint8_t> in, std::size_t offset) {
    return load_le<T>(in.subspan(offset, sizeof(T)).data());
}

template <std::size_t N>
void put_bytes(std::span<std::uint8_t> out, std::size_t offset,
               const std::array<std::uint8_t, N>& bytes) {
    std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(offset));
}

template <std::size_t N>
void get_bytes(std::span<const std::uint8_t> in, std::size_t offset,
               std::array<std::uint8_t, N>& bytes) {
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(offset), N, bytes.begin());
}

bool is_zero_uuid(const Uuid& uuid) {
    return std::all_of(uuid.begin(), uuid.end(), [](std::uint8_t b) { return b == 0; });
}

template <typename T>
constexpr std::uint64_t alignment_field(unsigned index) {
    constexpr unsigned kBits = 4;
    return ((static_cast<std::uint64_t>(alignof(T)) - 1) & ((1u << kBits) - 1)) << (index * kBits);
}

tl::unexpected<Error> invalid(const PoolSet& set, std::string what) {
    return fail(EINVAL, set.origin + ": " + what);
}

std::array<std::uint8_t, kSdsSize> encode_sds(const ShutdownState& sds) {
    std::array<std::uint8_t, kSdsSize> out{};
    put_le<std::uint64_t>(out, kSdsUscOffset, sds.usc);
    put_le<std::uint64_t>(out, kSdsUuidOffset, sds.uuid);
    out[kSdsDirtyOffset] = sds.dirty;
    put_bytes(out, kSdsReservedOffset, sds.reserved);
    put_le<std::uint64_t>(out, kSdsChecksumOffset, sds.checksum);
    return out;
}

Result<void> check_target_shape(const PoolSet& set) {
    if (set.replicas.size() != 1 || set.replicas[0].is_remote())
        return invalid(set, "a set served by rpmemd must have exactly one local replica");
    return {};
}

// The fields a pool's creator chose: its signature, major version and features.
void set_layout(PoolHeader& header, const PoolAttributes& attributes) {
    header.signature = attributes.signature;
    header.major = attributes.major;
    header.features = {attributes.compat_features, attributes.incompat_features,
                       attributes.ro_compat_features};
}

std::string part_name(std::size_t part) {
    return "part " + std::to_string(part);
}

} // namespace

ArchFlags ArchFlags::local() {
    ArchFlags flags;
    flags.alignment_desc =
        alignment_field<char>(0) | alignment_field<short>(1) | alignment_field<int>(2) |
        alignment_field<long>(3) | alignment_field<long long>(4) | alignment_field<std::size_t>(5) |
        alignment_field<off_t>(6) | alignment_field<float>(7) | alignment_field<double>(8) |
        alignment_field<long double>(9) | alignment_field<void*>(10);
    static_assert(sizeof(void*) == 8, "PMDK pools exist only for 64-bit machines");
    flags.machine_class = 2; // PMDK_MACHINE_CLASS_64
    flags.data = 1;          // PMDK_DATA_LE; PMDK supports only little-endian machines here
#if defined(__x86_64__)
    flags.machine = 62; // PMDK_MACHINE_X86_64
#elif defined(__aarch64__)
    flags.machine = 183; // PMDK_MACHINE_AARCH64
#else
#error "PMDK pool headers are defined for x86-64 and AArch64 only"
#endif
    return flags;
}

std::array<std::uint8_t, 16> ArchFlags::encode() const {
    std::array<std::uint8_t, 16> out{};
    put_le<std::uint64_t>(out, 0, alignment_desc);
    out[8] = machine_class;
    out[9] = data;
    put_bytes(out, 10, reserved);
    put_le<std::uint16_t>(out, 14, machine);
    return out;
}

ArchFlags ArchFlags::decode(std::span<const std::uint8_t, 16> bytes) {
    ArchFlags flags;
    flags.alignment_desc = get_le<std::uint64_t>(bytes, 0);
    flags.machine_class = bytes[8];
    flags.data = bytes[9];
    get_bytes(bytes, 10, flags.reserved);
    flags.machine = get_le<std::uint16_t>(bytes, 14);
    return flags;
}

std::uint64_t fletcher64(std::span<const std::uint8_t> bytes, std::size_t checksum_offset,
                         std::size_t skip_from) {
    std::uint32_t lo = 0;
    std::uint32_t hi = 0;
    for (std::size_t offset = 0; offset + 4 <= bytes.size(); offset += 4) {
        bool zero =
            (offset >= checksum_offset && offset < checksum_offset + 8) || offset >= skip_from;
        lo += zero ? 0 : get_le<std::uint32_t>(bytes, offset);
        hi += lo;
    }
    return static_cast<std::uint64_t>(hi) << 32 | lo;
}

std::uint64_t ShutdownState::compute_checksum() const {
    auto bytes = encode_sds(*this);
    return fletcher64(bytes, kSdsChecksumOffset, kSdsSize);
}

PoolHeader::Bytes PoolHeader::encode() const {
    Bytes out{};
    std::memcpy(out.data() + kSignatureOffset, signature.data(), signature.size());
    put_le<std::uint32_t>(out, kMajorOffset, major);
    put_le<std::uint32_t>(out, kCompatOffset, features.compat);
    put_le<std::uint32_t>(out, kIncompatOffset, features.incompat);
    put_le<std::uint32_t>(out, kRoCompatOffset, features.ro_compat);
    put_bytes(out, kPoolsetUuidOffset, poolset_uuid);
    put_bytes(out, kUuidOffset, uuid);
    put_bytes(out, kPrevPartOffset, prev_part_uuid);
    put_bytes(out, kNextPartOffset, next_part_uuid);
    put_bytes(out, kPrevReplOffset, prev_repl_uuid);
    put_bytes(out, kNextReplOffset, next_repl_uuid);
    put_le<std::uint64_t>(out, kCrtimeOffset, crtime);
    put_bytes(out, kArchFlagsOffset, arch_flags.encode());
    put_bytes(out, kUnusedOffset, unused);
    put_bytes(out, kUnused2Offset, unused2);
    put_bytes(out, kSdsOffset, encode_sds(sds));
    put_le<std::uint64_t>(out, kChecksumOffset, checksum);
    return out;
}

PoolHeader PoolHeader::decode(std::span<const std::uint8_t, kPoolHeaderSize> in) {
    PoolHeader h;
    std::memcpy(h.signature.data(), in.data() + kSignatureOffset, h.signature.size());
    h.major = get_le<std::uint32_t>(in, kMajorOffset);
    h.features.compat = get_le<std::uint32_t>(in, kCompatOffset);
    h.features.incompat = get_le<std::uint32_t>(in, kIncompatOffset);
    h.features.ro_compat = get_le<std::uint32_t>(in, kRoCompatOffset);
    get_bytes(in, kPoolsetUuidOffset, h.poolset_uuid);
    get_bytes(in, kUuidOffset, h.uuid);
    get_bytes(in, kPrevPartOffset, h.prev_part_uuid);
    get_bytes(in, kNextPartOffset, h.next_part_uuid);
    get_bytes(in, kPrevReplOffset, h.prev_repl_uuid);
    get_bytes(in, kNextReplOffset, h.next_repl_uuid);
    h.crtime = get_le<std::uint64_t>(in, kCrtimeOffset);
    h.arch_flags = ArchFlags::decode(in.subspan<kArchFlagsOffset, 16>());
    get_bytes(in, kUnusedOffset, h.unused);
    get_bytes(in, kUnused2Offset, h.unused2);
    h.sds.usc = get_le<std::uint64_t>(in, kSdsOffset + kSdsUscOffset);
    h.sds.uuid = get_le<std::uint64_t>(in, kSdsOffset + kSdsUuidOffset);
    h.sds.dirty = in[kSdsOffset + kSdsDirtyOffset];
    get_bytes(in, kSdsOffset + kSdsReservedOffset, h.sds.reserved);
    h.sds.checksum = get_le<std::uint64_t>(in, kSdsOffset + kSdsChecksumOffset);
    h.checksum = get_le<std::uint64_t>(in, kChecksumOffset);
    return h;
}

std::uint64_t PoolHeader::compute_checksum() const {
    Bytes bytes = encode();
    std::size_t skip_from =
        (features.incompat & kFeatureChecksum2K) != 0 ? kChecksum2KEnd : kPoolHeaderSize;
    return fletcher64(bytes, kChecksumOffset, skip_from);
}

bool PoolHeader::is_zero() const {
    Bytes bytes = encode();
    return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

PoolAttributes PoolHeader::attributes() const {
    PoolAttributes attributes;
    attributes.signature = signature;
    attributes.major = major;
    attributes.compat_features = features.compat;
    attributes.incompat_features = features.incompat;
    attributes.ro_compat_features = features.ro_compat;
    attributes.poolset_uuid = poolset_uuid;
    attributes.uuid = uuid;
    attributes.next_uuid = next_repl_uuid;
    attributes.prev_uuid = prev_repl_uuid;
    attributes.user_flags = arch_flags.encode();
    return attributes;
}

Uuid random_uuid() {
    Uuid uuid{};
    std::size_t filled = 0;
    while (filled < uuid.size()) {
        ssize_t got = getrandom(uuid.data() + filled, uuid.size() - filled, 0);
        if (got > 0)
            filled += static_cast<std::size_t>(got);
        // getrandom only fails with EINTR (or ENOSYS on kernels older than 3.17): retry.
    }
    uuid[6] = static_cast<std::uint8_t>((uuid[6] & 0x0f) | 0x40); // version 4
    uuid[8] = static_cast<std::uint8_t>((uuid[8] & 0x3f) | 0x80); // RFC 4122 variant
    return uuid;
}

Result<std::vector<PoolHeader>> build_target_headers(const PoolSet& set,
                                                     const PoolAttributes& attributes,
                                                     std::span<const std::uint64_t> crtimes,
                                                     const UuidSource& uuids) {
    if (auto shape = check_target_shape(set); !shape)
        return tl::unexpected(std::move(shape.error()));
    const ReplicaSpec& replica = set.replicas[0];
    bool zero = attributes.is_zero();
    if (zero != set.options.no_headers)
        return invalid(set, zero ? "pool attributes are required for a set with headers "
                                   "(zero attributes need OPTION NOHDRS)"
                                 : "pool attributes are not supported for a set without "
                                   "headers (OPTION NOHDRS)");
    if (!zero &&
        set.options.single_header != ((attributes.incompat_features & kFeatureSingleHeader) != 0))
        return invalid(set, "the pool's SINGLEHDR feature flag and the set's OPTION "
                            "SINGLEHDR do not match");
    if (crtimes.size() != replica.parts.size())
        return invalid(set, "one creation time per part is needed");
    if (zero)
        return std::vector<PoolHeader>{};

    // UUIDs in PMDK's order: pool set (if not given), then every header-carrying part, then
    // part 0's replaced by the given one.
    Uuid poolset_uuid = is_zero_uuid(attributes.poolset_uuid) ? uuids() : attributes.poolset_uuid;
    std::size_t count = set.header_count(replica);
    std::vector<Uuid> part_uuids(count);
    for (Uuid& uuid : part_uuids)
        uuid = uuids();
    if (!is_zero_uuid(attributes.uuid))
        part_uuids[0] = attributes.uuid;

    bool own_arch_flags = std::all_of(attributes.user_flags.begin(), attributes.user_flags.end(),
                                      [](std::uint8_t b) { return b == 0; });
    ArchFlags arch_flags =
        own_arch_flags ? ArchFlags::local() : ArchFlags::decode(attributes.user_flags);

    std::vector<PoolHeader> headers(count);
    for (std::size_t p = 0; p < count; ++p) {
        PoolHeader& h = headers[p];
        set_layout(h, attributes);
        if (set.options.single_header)
            h.features.incompat |= kFeatureSingleHeader;
        h.poolset_uuid = poolset_uuid;
        h.uuid = part_uuids[p];
        h.prev_part_uuid = part_uuids[(p + count - 1) % count];
        h.next_part_uuid = part_uuids[(p + 1) % count];
        // A target set has a single replica: its replica links default to itself.
        h.prev_repl_uuid =
            is_zero_uuid(attributes.prev_uuid) ? part_uuids[0] : attributes.prev_uuid;
        h.next_repl_uuid =
            is_zero_uuid(attributes.next_uuid) ? part_uuids[0] : attributes.next_uuid;
        h.crtime = crtimes[p];
        h.arch_flags = arch_flags;
        if (p == 0 && (h.features.incompat & kFeatureShutdownState) != 0) {
            h.sds = ShutdownState{};
            set_shutdown_dirty(h, true);
        }
        h.update_checksum();
    }
    return headers;
}

void set_shutdown_dirty(PoolHeader& header, bool dirty) {
    header.sds.dirty = dirty ? 1 : 0;
    header.sds.update_checksum();
}

Result<PoolAttributes> check_target_headers(const PoolSet& set,
                                            std::span<const PoolHeader> headers) {
    if (auto shape = check_target_shape(set); !shape)
        return tl::unexpected(std::move(shape.error()));
    std::size_t count = set.header_count(set.replicas[0]);
    if (headers.size() != count)
        return invalid(set, "expected " + std::to_string(count) + " pool headers, got " +
                                std::to_string(headers.size()));
    if (count == 0)
        return PoolAttributes{};

    const PoolHeader& first = headers[0];
    for (std::size_t p = 0; p < count; ++p) {
        const PoolHeader& h = headers[p];
        auto mismatch = [&](std::string_view what) {
            return invalid(set, "pool header of " + part_name(p) + ": " + std::string(what));
        };
        if (h.is_zero())
            return mismatch("all zero (not a pool)");
        if (h.signature != first.signature)
            return mismatch("signature differs from part 0's");
        if (h.major != first.major)
            return mismatch("major version differs from part 0's");
        if (h.features.compat != first.features.compat)
            return mismatch("compat feature flags differ from part 0's");
        if (h.features.incompat != first.features.incompat)
            return mismatch("incompat feature flags differ from part 0's");
        if (h.features.ro_compat != first.features.ro_compat)
            return mismatch("ro_compat feature flags differ from part 0's");
        if (!h.checksum_valid())
            return mismatch("invalid checksum");
        if (h.poolset_uuid != first.poolset_uuid)
            return mismatch("pool set UUID differs from part 0's");
        if (h.prev_repl_uuid != first.prev_repl_uuid)
            return mismatch("previous replica UUID differs from part 0's");
        if (h.next_repl_uuid != first.next_repl_uuid)
            return mismatch("next replica UUID differs from part 0's");
        if (h.arch_flags != first.arch_flags)
            return mismatch("architecture flags differ from part 0's");
        if (h.prev_part_uuid != headers[(p + count - 1) % count].uuid ||
            h.next_part_uuid != headers[(p + 1) % count].uuid)
            return mismatch("part UUID links do not form the ring of the set's parts");
    }
    return first.attributes();
}

Result<void> apply_attributes(const PoolSet& set, std::span<PoolHeader> headers,
                              const PoolAttributes& attributes) {
    if (auto shape = check_target_shape(set); !shape)
        return shape;
    std::size_t count = set.header_count(set.replicas[0]);
    if (count == 0)
        return invalid(set, "cannot set pool attributes of a pool without headers "
                            "(OPTION NOHDRS)");
    if (attributes.is_zero())
        return invalid(set, "zero pool attributes cannot be set on a pool with headers");
    if (headers.size() != count)
        return invalid(set, "expected " + std::to_string(count) + " pool headers, got " +
                                std::to_string(headers.size()));
    std::size_t before_first = count - 1;
    std::size_t after_first = 1 % count;
    for (std::size_t p = 0; p < count; ++p) {
        PoolHeader& h = headers[p];
        set_layout(h, attributes);
        h.poolset_uuid = attributes.poolset_uuid;
        h.next_repl_uuid = attributes.next_uuid;
        h.prev_repl_uuid = attributes.prev_uuid;
        h.arch_flags = ArchFlags::decode(attributes.user_flags);
        if (p == 0)
            h.uuid = attributes.uuid;
        if (p == before_first)
            h.next_part_uuid = attributes.uuid;
        if (p == after_first)
            h.prev_part_uuid = attributes.uuid;
        h.update_checksum();
    }
    return {};
}

void link_replicas(std::span<PoolHeader> headers, const Uuid& prev, const Uuid& next) {
    for (PoolHeader& header : headers) {
        header.prev_repl_uuid = prev;
        header.next_repl_uuid = next;
        header.update_checksum();
    }
}

} // namespace rpmem::poolset
