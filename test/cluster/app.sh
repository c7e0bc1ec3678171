#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The application's start script, as an operator writes one for ocf:heartbeat:anything: the
# environment of librpmem (credentials, timeouts) and of this build (our librpmem.so.1, the ASan
# runtime Debian's libpmemobj needs to load it), then the unmodified libpmemobj program.
#   app.sh create|run|verify POOL_SET
set -a
. /srv/rpmem/app.env
set +a
exec "$TX_WRITER" "$@"
