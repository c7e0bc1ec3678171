// SPDX-License-Identifier: BSD-3-Clause
#include "fabric/passive_endpoint.h"

#include <algorithm>
#include <cerrno>

#include <sys/socket.h>

#include "fabric/address.h"
#include "fabric/fabric_error.h"
#include "fabric/port_sockets.h"

namespace rpmem::fabric {

Result<PassiveEndpoint> PassiveEndpoint::listen(const Fabric& fabric, const fi_info& info,
                                                EventQueue& events) {
    FidPtr<fid_pep> pep;
    int ret = fi_passive_ep(fabric.get(), const_cast<fi_info*>(&info), pep.out(), nullptr);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_passive_ep"));
    ret = fi_pep_bind(pep.get(), &events.get()->fid, 0);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_pep_bind"));
    ret = fi_listen(pep.get());
    const std::string wanted = format_address(info.src_addr, info.src_addrlen);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_listen", wanted));

    sockaddr_storage bound{};
    std::size_t length = sizeof bound;
    ret = fi_getname(&pep->fid, &bound, &length);
    if (ret != 0)
        return fail(fabric_error(ret, "fi_getname of the listener", wanted));
    const auto port = address_port(&bound, length);
    if (!port)
        return fail(EAFNOSUPPORT, "listener bound to an address that is not IPv4 or IPv6",
                    ErrorSource::fabric, 0);
    return PassiveEndpoint(events, std::move(pep), format_address(&bound, length), *port);
}

Result<ConnectionRequest> PassiveEndpoint::wait_request(Deadline deadline) {
    auto request = events_->wait_request(deadline);
    if (!request)
        request.error().add_context("listener " + address_);
    return request;
}

Result<void> PassiveEndpoint::reject(const ConnectionRequest& request,
                                     std::span<const std::byte> private_data) {
    if (!request.info)
        return fail(EINVAL, "reject: the request carries no connection handle");
    const int ret =
        fi_reject(pep_.get(), request.info->handle,
                  private_data.empty() ? nullptr : private_data.data(), private_data.size());
    if (ret != 0)
        return fail(fabric_error(ret, "fi_reject", request.peer));
    return {};
}

void PassiveEndpoint::stop_listening() noexcept {
    auto sockets = tcp_sockets();
    if (!sockets)
        return;
    for (const PortSocket& socket : *sockets)
        if (socket.listening && socket.local_port == port_ && shut_down(socket))
            stopped_.push_back(socket.inode);
}

bool PassiveEndpoint::is_stopped_listener(const PortSocket& socket) const noexcept {
    return std::find(stopped_.begin(), stopped_.end(), socket.inode) != stopped_.end();
}

} // namespace rpmem::fabric
