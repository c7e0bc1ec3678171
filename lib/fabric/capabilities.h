// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <rdma/fabric.h>

namespace rpmem::fabric {

// What a chosen provider offers, read back from its fi_info: the features the persistence
// methods rely on and the limits the layers above size their queues and lanes by. A value type.
struct Capabilities {
    std::string provider; // prov_name: "tcp", "sockets", "verbs", ...
    std::string fabric;   // fabric_attr->name
    std::string domain;   // domain_attr->name

    // The data is moved by the host CPU (tcp, sockets): "remote writes" pass through the
    // target's CPU caches like any store. False only for protocols known to be served by a NIC.
    bool software = true;
    // FI_RMA_PMEM: the provider advertises writes into persistent memory regions.
    bool rma_pmem = false;
    // FI_COMMIT_COMPLETE on a write is honoured: the target flushes the range before it acks.
    // Advertised through FI_RMA_PMEM; sockets honours the flag without advertising it.
    bool commit_complete = false;
    bool read_after_write = false; // tx msg_order has FI_ORDER_RAW
    bool send_after_write = false; // tx msg_order has FI_ORDER_SAW
    bool manual_progress = false;  // data progress is FI_PROGRESS_MANUAL: the app drives it

    // mr_mode bits in force.
    bool mr_local = false;     // FI_MR_LOCAL: local buffers need their descriptor
    bool mr_virt_addr = false; // FI_MR_VIRT_ADDR: remote addresses are virtual addresses,
                               // otherwise offsets into the remote region
    bool mr_prov_key = false;  // FI_MR_PROV_KEY: the provider chooses keys
    bool mr_allocated = false; // FI_MR_ALLOCATED: only backed memory may be registered
    std::size_t mr_key_size = 0;

    std::uint64_t max_msg_size = 0;
    std::size_t inject_size = 0;
    std::size_t tx_depth = 0;         // tx_attr->size
    std::size_t rx_depth = 0;         // rx_attr->size
    std::size_t iov_limit = 0;        // tx iov_limit
    std::size_t max_endpoints = 0;    // min(domain ep_cnt, tx_ctx_cnt, rx_ctx_cnt)
    std::size_t max_cqs = 0;          // domain cq_cnt
    std::size_t max_private_data = 0; // bytes a connection request may carry

    static Capabilities from_info(const fi_info& info);

    // One line for logs: "tcp fabric 127.0.0.0/8 domain lo: rma_pmem commit raw saw ...".
    std::string describe() const;
};

} // namespace rpmem::fabric
