// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/capabilities.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace rpmem::fabric {

namespace {

// FI_CM_DATA_SIZE is not in fi_info; every provider we support takes at least this much
// (verbs: 56 bytes through rdma_cm, tcp and sockets: 256). Endpoint::connect checks the real
// limit with fi_getopt(FI_OPT_CM_DATA_SIZE) when the provider implements it.
constexpr std::size_t kPortablePrivateData = 56;

bool is_hardware_protocol(std::uint32_t protocol) {
    switch (protocol) {
    case FI_PROTO_RDMA_CM_IB_RC:
    case FI_PROTO_IWARP:
    case FI_PROTO_IB_UD:
    case FI_PROTO_IB_RDM:
    case FI_PROTO_IWARP_RDM:
        return true;
    default:
        return false;
    }
}

std::string_view string_or_empty(const char* text) {
    return text != nullptr ? std::string_view(text) : std::string_view();
}

} // namespace

Capabilities Capabilities::from_info(const fi_info& info) {
    Capabilities caps;
    if (info.fabric_attr != nullptr) {
        caps.provider = string_or_empty(info.fabric_attr->prov_name);
        caps.fabric = string_or_empty(info.fabric_attr->name);
    }
    if (info.ep_attr != nullptr) {
        caps.software = !is_hardware_protocol(info.ep_attr->protocol);
        caps.max_msg_size = info.ep_attr->max_msg_size;
    }
    caps.rma_pmem = (info.caps & FI_RMA_PMEM) != 0;
    // The sockets provider's progress engine flushes FI_COMMIT_COMPLETE writes (measured with
    // libfabric 1.17) although it does not list FI_RMA_PMEM among its capabilities.
    caps.commit_complete = caps.rma_pmem || caps.provider == "sockets";
    if (info.tx_attr != nullptr) {
        caps.read_after_write = (info.tx_attr->msg_order & FI_ORDER_RAW) != 0;
        caps.send_after_write = (info.tx_attr->msg_order & FI_ORDER_SAW) != 0;
        caps.inject_size = info.tx_attr->inject_size;
        caps.tx_depth = info.tx_attr->size;
        caps.iov_limit = info.tx_attr->iov_limit;
    }
    if (info.rx_attr != nullptr)
        caps.rx_depth = info.rx_attr->size;
    if (info.domain_attr != nullptr) {
        const fi_domain_attr& domain = *info.domain_attr;
        caps.domain = string_or_empty(domain.name);
        caps.manual_progress = domain.data_progress == FI_PROGRESS_MANUAL;
        caps.mr_local = (domain.mr_mode & FI_MR_LOCAL) != 0;
        caps.mr_virt_addr = (domain.mr_mode & FI_MR_VIRT_ADDR) != 0;
        caps.mr_prov_key = (domain.mr_mode & FI_MR_PROV_KEY) != 0;
        caps.mr_allocated = (domain.mr_mode & FI_MR_ALLOCATED) != 0;
        caps.mr_key_size = domain.mr_key_size;
        caps.max_endpoints = std::min({domain.ep_cnt, domain.tx_ctx_cnt, domain.rx_ctx_cnt});
        caps.max_cqs = domain.cq_cnt;
    }
    caps.max_private_data = kPortablePrivateData;
    return caps;
}

std::string Capabilities::describe() const {
    return fmt::format(
        "{} (fabric {}, domain {}): {}{}{}{}{}{}mr[{}{}{}{}] max_msg {} inject {} tx {} rx {} "
        "endpoints {} cqs {}",
        provider, fabric, domain, software ? "software " : "hardware ", rma_pmem ? "rma_pmem " : "",
        commit_complete ? "commit_complete " : "", read_after_write ? "raw " : "",
        send_after_write ? "saw " : "", manual_progress ? "manual_progress " : "auto_progress ",
        mr_local ? "local " : "", mr_virt_addr ? "virt_addr " : "offset ",
        mr_prov_key ? "prov_key " : "user_key ", mr_allocated ? "allocated" : "", max_msg_size,
        inject_size, tx_depth, rx_depth, max_endpoints, max_cqs);
}

} // namespace rpmem::fabric
