#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A two-node Pacemaker cluster on this machine, and rpmem's failover scenarios run by it.

Each node (alpha, beta) is a set of namespaces: a network namespace joined to the other's by a
veth pair (10.233.0.1 and .2), and, inside it, mount, UTS and PID namespaces made by unshare: its
own host name, /run, /dev/shm, /etc/corosync, /var/lib/pacemaker, /var/lib/corosync,
/var/log/pacemaker and /srv (rpmemd's pool sets, the application) bound from the node's "disk"
under the work directory, and overlays adding our OCF agents and fence agent. Corosync (knet,
two_node: 1) and pacemakerd run in it directly, without systemd. Powering a node off kills its
PID namespace; the power switch (a Unix socket served by this script, outside the nodes, as a
BMC is outside a host) is what the fence agent fence_rpmem_ns asks.

Resources are configured with crmsh as an operator would: rpmemd as a clone, ocf:rpmem:replica
as a promotable clone, the application group (ocf:rpmem:app-pool-set, then tx-writer under
ocf:heartbeat:anything) colocated with the promoted instance and ordered after its promote.

Scenarios, as TAP test points, each with its own deadline: failover, rejoin, switchover,
split-brain. On failure the crm_mon snapshots taken after each step and the tails of the logs
are printed. Needs root; otherwise it reports the whole test skipped.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
NET = "10.233.0"
POOL_SIZE = "16M"
SET = "app.set"


def log(text):
    for line in str(text).splitlines() or [""]:
        print("# " + line, flush=True)


class StepFailed(Exception):
    pass


def sh(argv, timeout=30, check=True, env=None, input=None):
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                            input=input)
    if check and result.returncode != 0:
        raise StepFailed("%s: status %d\n%s%s" % (" ".join(argv), result.returncode,
                                                   result.stdout, result.stderr))
    return result


BEGUN = time.monotonic()


def wait_for(what, predicate, timeout, interval=0.25):
    started = time.monotonic()
    deadline = started + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                now = time.monotonic()
                log("%6.1f s: %s (%.1f s)" % (now - BEGUN, what, now - started))
                return last
        except (StepFailed, subprocess.TimeoutExpired, OSError, ValueError) as error:
            last = error
        time.sleep(interval)
    raise StepFailed("timed out after %ds waiting for %s (last: %s)" % (timeout, what, last))


def missing_precondition():
    if os.geteuid() != 0:
        return "the cluster test makes namespaces and runs corosync and pacemaker: not root"
    for tool in ("corosync", "pacemakerd", "crm", "crm_mon", "ip", "unshare", "nsenter"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            return "%s is not installed (scripts/install-deps installs pacemaker, corosync, crmsh)" % tool
    for name in ("RPMEMD", "RPMEMCTL", "TX_WRITER", "LIBRPMEM_DIR"):
        if not os.environ.get(name):
            return "%s is not set (run under meson test)" % name
    return None


NODE_INIT = r"""#!/bin/sh
# A node's boot: its own mounts, host name, then corosync and pacemakerd in the foreground.
set -e
name=$1 disk=$2 overlay=$3
hostname "$name"
mount --make-rprivate /
mount -t tmpfs -o mode=755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
for d in etc/corosync var/lib/pacemaker var/lib/corosync var/log/pacemaker srv; do
  mkdir -p "$disk/$d"
  mount --bind "$disk/$d" "/$d"
done
mount -t overlay overlay -o lowerdir="$overlay/resource.d:/usr/lib/ocf/resource.d" /usr/lib/ocf/resource.d
mount -t overlay overlay -o lowerdir="$overlay/sbin:/usr/sbin" /usr/sbin
mkdir -p /run/crm /run/resource-agents /var/lib/pacemaker/cib /var/lib/pacemaker/pengine \
  /var/lib/pacemaker/blackbox /var/lib/pacemaker/cores
chown -R hacluster:haclient /run/crm /var/lib/pacemaker /var/log/pacemaker
chmod 750 /var/lib/pacemaker/cib /var/lib/pacemaker/pengine
export PCMK_logfile=/var/log/pacemaker/pacemaker.log PCMK_logpriority=crit
corosync -f >>/var/log/pacemaker/corosync.log 2>&1 &
tries=0
until corosync-cfgtool -s >/dev/null 2>&1; do
  tries=$((tries + 1)); [ $tries -gt 200 ] && { echo "corosync did not come up" >&2; exit 1; }
  sleep 0.1
done
pacemakerd -f >>/var/log/pacemaker/pacemakerd.out 2>&1 &
wait
"""

COROSYNC_CONF = """totem {
  version: 2
  cluster_name: rpmem
  transport: knet
  crypto_cipher: none
  crypto_hash: none
  token: 1000
}
logging {
  to_stderr: yes
  to_syslog: no
  timestamp: on
}
quorum {
  provider: corosync_votequorum
  two_node: 1
}
nodelist {
  node {
    name: alpha
    nodeid: 1
    ring0_addr: %(net)s.1
  }
  node {
    name: beta
    nodeid: 2
    ring0_addr: %(net)s.2
  }
}
"""


FIRST_CIB = """<cib crm_feature_set="3.16.1" validate-with="pacemaker-3.8" epoch="1" num_updates="0"
     admin_epoch="0">
  <configuration>
    <crm_config>
      <cluster_property_set id="cib-bootstrap-options">
        <nvpair id="cib-bootstrap-options-dc-deadtime" name="dc-deadtime" value="2s"/>
      </cluster_property_set>
    </crm_config>
    <nodes/>
    <resources/>
    <constraints/>
  </configuration>
  <status/>
</cib>
"""


class Node:
    """One host: its network namespace (kept while powered off, like the host's cabling) and,
    while on, the unshare process whose PID namespace holds every process of the node."""

    def __init__(self, cluster, name, index):
        self.cluster = cluster
        self.name = name
        self.address = "%s.%d" % (NET, index)
        self.netns = "%s-%s" % (cluster.prefix, name)
        self.veth = "rpmc-" + name[0]
        self.disk = os.path.join(cluster.work, name)
        self.process = None
        self.init_pid = None

    def target(self):
        return self.address

    def path(self, inside):
        """The host's path of a file under the node's /srv or /var/log/pacemaker."""
        return os.path.join(self.disk, inside.lstrip("/"))

    def is_on(self):
        return self.process is not None and self.process.poll() is None

    def power_on(self):
        if self.is_on():
            return
        self.cluster.link(self, up=True)
        console = open(os.path.join(self.cluster.work, self.name + "-console.log"), "a")
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, "unshare", "--mount", "--uts", "--pid", "--fork",
             "--mount-proc", "--kill-child=SIGKILL", "/bin/sh", self.cluster.node_init,
             self.name, self.disk, self.cluster.overlay],
            stdin=subprocess.DEVNULL, stdout=console, stderr=console, start_new_session=True)
        console.close()

        def child():
            with open("/proc/%d/task/%d/children" % (self.process.pid, self.process.pid)) as f:
                pids = f.read().split()
            return int(pids[0]) if pids else None
        self.init_pid = wait_for(self.name + "'s init", child, 10, 0.02)

    def power_off(self):
        """Kills the PID namespace at once (unshare's child gets SIGKILL when unshare dies)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        if self.init_pid:
            wait_for(self.name + "'s processes to die",
                     lambda: not os.path.exists("/proc/%d" % self.init_pid), 10, 0.02)
        self.process = None
        self.init_pid = None

    def run(self, argv, timeout=30, check=True, env=None):
        if not self.is_on():
            raise StepFailed("%s is off" % self.name)
        return sh(["nsenter", "-t", str(self.init_pid), "-a", "--"] + argv, timeout, check, env)

    def crm(self, *args, timeout=30, check=True):
        return self.run(["crm"] + list(args), timeout=timeout, check=check)

    def rpmemctl(self, *args, check=True, timeout=30):
        env = dict(os.environ)
        env.update(self.cluster.tools_env)
        return self.run([os.environ["RPMEMCTL"]] + list(args), timeout=timeout, check=check,
                        env=env)

    def role(self, node):
        reply = self.rpmemctl("role", node.target(), SET, "--json")
        return json.loads(reply.stdout)


class Cluster:
    def __init__(self):
        self.prefix = "rpmc%d" % os.getpid()
        self.work = tempfile.mkdtemp(prefix="rpmem-cluster-")
        self.overlay = os.path.join(self.work, "overlay")
        self.node_init = os.path.join(self.work, "node-init.sh")
        self.switch_path = os.path.join(self.work, "power.sock")
        self.power_log = []
        self.snapshots = []
        self.nodes = [Node(self, "alpha", 1), Node(self, "beta", 2)]
        self.alpha, self.beta = self.nodes
        self.janitor = None
        self.tools_env = {}

    # Removal is guaranteed by a janitor in a session of its own (meson's kill at a timeout
    # does not reach it) that waits for the end of a pipe this process holds.
    def start_janitor(self):
        script = "cat <&3 >/dev/null; "
        for node in self.nodes:
            script += ("for p in $(ip netns pids %s 2>/dev/null); do kill -9 $p; done; "
                       "ip netns del %s 2>/dev/null; " % (node.netns, node.netns))
        script += "exit 0"
        read_end, write_end = os.pipe()
        self.janitor = subprocess.Popen(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        pass_fds=(read_end,), start_new_session=True,
                                        preexec_fn=lambda: os.dup2(read_end, 3))
        os.close(read_end)
        self.janitor_pipe = write_end

    def remove(self):
        for node in self.nodes:
            try:
                node.power_off()
            except Exception as error:  # noqa: BLE001 - cleanup goes on
                log("powering %s off: %s" % (node.name, error))
        if self.janitor:
            os.close(self.janitor_pipe)
            self.janitor.wait(timeout=30)
        if os.environ.get("RPMEM_CLUSTER_KEEP"):
            log("work directory kept: " + self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    def link(self, node, up):
        sh(["ip", "-n", node.netns, "link", "set", node.veth, "up" if up else "down"])

    def cut(self):
        for node in self.nodes:
            self.link(node, up=False)

    def heal(self):
        for node in self.nodes:
            self.link(node, up=True)

    def setup_network(self):
        for node in self.nodes:
            sh(["ip", "netns", "add", node.netns])
            sh(["ip", "-n", node.netns, "link", "set", "lo", "up"])
        a, b = self.nodes
        sh(["ip", "-n", a.netns, "link", "add", a.veth, "type", "veth", "peer", "name", b.veth,
            "netns", b.netns])
        for node in self.nodes:
            sh(["ip", "-n", node.netns, "addr", "add", node.address + "/24", "dev", node.veth])

    # The power switch: "off NODE", "on NODE", "reboot NODE", "status NODE", "list".
    def serve_power_switch(self):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(self.switch_path)
        server.listen(4)

        def handle(connection):
            with connection:
                request = connection.makefile().readline().split()
                reply = "error: bad request"
                try:
                    node = {n.name: n for n in self.nodes}.get(request[1]) if len(request) > 1 else None
                    if request[0] == "list":
                        reply = " ".join(n.name for n in self.nodes)
                    elif node is None:
                        reply = "error: no such node"
                    elif request[0] == "status":
                        reply = "on" if node.is_on() else "off"
                    elif request[0] in ("off", "reboot", "on"):
                        self.power_log.append((time.monotonic(), request[0], node.name))
                        if request[0] in ("off", "reboot"):
                            node.power_off()
                        if request[0] in ("on", "reboot"):
                            node.power_on()
                        reply = "ok"
                except Exception as error:  # noqa: BLE001 - the agent gets the reason
                    reply = "error: %s" % error
                connection.sendall((reply + "\n").encode())

        def loop():
            while True:
                try:
                    connection, _ = server.accept()
                except OSError:
                    return
                threading.Thread(target=handle, args=(connection,), daemon=True).start()
        threading.Thread(target=loop, daemon=True).start()

    def write_files(self):
        os.makedirs(os.path.join(self.overlay, "resource.d", "rpmem"))
        os.makedirs(os.path.join(self.overlay, "sbin"))
        for agent in ("replica", "app-pool-set"):
            shutil.copy(os.path.join(SOURCE_ROOT, "tools", "ocf", agent),
                        os.path.join(self.overlay, "resource.d", "rpmem", agent))
        shutil.copy(os.path.join(HERE, "fence_rpmem_ns"), os.path.join(self.overlay, "sbin"))
        with open(self.node_init, "w") as f:
            f.write(NODE_INIT)
        tls = os.path.join(self.work, "tls")
        names = ["--server-name=127.0.0.1"] + ["--server-name=" + n.address for n in self.nodes]
        sh([os.environ["RPMEMCTL"], "init", tls, "--client-name=cluster"] + names)
        credentials = {"RPMEM_TLS_CA": tls + "/ca.crt", "RPMEM_TLS_CERT": tls + "/client.crt",
                       "RPMEM_TLS_KEY": tls + "/client.key", "RPMEM_PROVIDER": "tcp",
                       "RPMEM_CONNECT_TIMEOUT": "1s", "RPMEM_TIMEOUT": "3s"}
        self.tools_env = dict(credentials, ASAN_OPTIONS="detect_leaks=0")
        preload = os.environ.get("ASAN_PRELOAD", "")
        app_env = dict(credentials, TX_WRITER=os.environ["TX_WRITER"],
                       LD_LIBRARY_PATH=os.environ["LIBRPMEM_DIR"],
                       ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
                       RPMEM_LOG_LEVEL="info", **({"LD_PRELOAD": preload} if preload else {}))
        for node in self.nodes:
            srv = node.path("srv/rpmem")
            os.makedirs(os.path.join(srv, "pools"))
            os.makedirs(os.path.join(srv, "app"))
            os.makedirs(node.path("etc/corosync"))
            with open(node.path("etc/corosync/corosync.conf"), "w") as f:
                f.write(COROSYNC_CONF % {"net": NET})
            # A first CIB with a short DC election wait (the default waits 20 s for the other
            # node at the first start); pacemaker-based takes a CIB without a signature file.
            os.makedirs(node.path("var/lib/pacemaker/cib"))
            with open(node.path("var/lib/pacemaker/cib/cib.xml"), "w") as f:
                f.write(FIRST_CIB)
            with open(os.path.join(srv, "rpmemd.conf"), "w") as f:
                f.write("poolset-dir = /srv/rpmem/pools\nlisten = %s:7636\n"
                        "tls-ca = %s/ca.crt\ntls-cert = %s/server.crt\ntls-key = %s/server.key\n"
                        "admin-client = cluster\nheartbeat = 2s\nlog-level = info\n"
                        % (node.address, tls, tls, tls))
            with open(os.path.join(srv, "pools", SET), "w") as f:
                f.write("PMEMPOOLSET\n%s /srv/rpmem/pools/app.part0\n" % POOL_SIZE)
            for name, values in (("cluster.env", credentials), ("app.env", app_env)):
                with open(os.path.join(srv, name), "w") as f:
                    f.writelines("%s=%s\n" % item for item in values.items())

    def snapshot(self, step):
        """crm_mon of every node that is on, kept for the report of a failure."""
        text = []
        for node in self.nodes:
            if node.is_on():
                result = node.run(["crm_mon", "-1", "-r", "-f", "-A", "--show-detail"],
                                  check=False, timeout=20)
                text.append("--- crm_mon on %s\n%s%s" % (node.name, result.stdout, result.stderr))
            else:
                text.append("--- %s is off" % node.name)
        self.snapshots.append((step, "\n".join(text)))

    def report_failure(self):
        for step, text in self.snapshots:
            log("==== after step: %s" % step)
            log(text)
        log("==== power switch requests: %s" % self.power_log)
        for node in self.nodes:
            for name, lines in (("var/log/pacemaker/pacemaker.log", 80),
                                ("srv/rpmem/app/app.err", 20), ("srv/rpmem/app/app.log", 5),
                                ("srv/rpmem/rpmemd.log", 20)):
                path = node.path(name)
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        tail = f.readlines()[-lines:]
                    if name.endswith("pacemaker.log"):
                        tail = [l for l in tail if re.search(
                            r"error|warn|notice|rpmem|replica|app|fence|stonith", l, re.I)][-40:]
                    log("==== %s: %s (last lines)" % (node.name, name))
                    log("".join(tail))


def app_log(node):
    path = node.path("srv/rpmem/app/app.log")
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return f.read().splitlines()


def last_committed(node):
    count = None
    for line in app_log(node):
        if line.startswith("committed "):
            count = int(line.split()[1])
    return count


def opens(node):
    """(verified count, this run's session, {session: (first, last)}) per open of the app."""
    runs = []
    current = None
    for line in app_log(node):
        words = line.split()
        if line.startswith("verified "):
            current = {"verified": int(words[1]), "sessions": {}, "session": None}
            runs.append(current)
        elif line.startswith("session ") and current is not None:
            if len(words) == 6:
                current["sessions"][words[1]] = (int(words[3]), int(words[5]))
            else:
                current["session"] = words[1]
    return runs


def located(node, resource):
    result = node.run(["crm_resource", "--locate", "--resource", resource], check=False)
    return result.stdout


def app_running_on(observer, node):
    return ("is running on: %s" % node.name) in located(observer, "app")


def committed_beyond(node, count):
    last = last_committed(node)
    return last is not None and last >= count


CONFIG = """
primitive rpmemd ocf:heartbeat:anything \\
    params binfile="%(rpmemd)s" cmdline_options="--config /srv/rpmem/rpmemd.conf" \\
      logfile=/srv/rpmem/rpmemd.log errlogfile=/srv/rpmem/rpmemd.log \\
    op monitor interval=10s timeout=20s
clone rpmemd-clone rpmemd meta interleave=true
primitive fence-switch stonith:fence_rpmem_ns \\
    params socket="%(socket)s" pcmk_host_list="alpha beta" \\
    op monitor interval=60s
property stonith-enabled=true stonith-action=off stonith-timeout=30s \\
    cluster-recheck-interval=30s
"""

CONFIG_POOL = """
primitive pool ocf:rpmem:replica \\
    params pool_set=%(set)s peers="%(peers)s" pool_set_dir=/srv/rpmem/pools \\
      rpmemctl="%(rpmemctl)s" env_file=/srv/rpmem/cluster.env app_resource=app-group \\
    op start timeout=60s op stop timeout=30s op promote timeout=60s op demote timeout=60s \\
    op notify timeout=60s \\
    op monitor interval=5s role=Unpromoted timeout=30s \\
    op monitor interval=4s role=Promoted timeout=30s
clone pool-clone pool meta promotable=true promoted-max=1 promoted-node-max=1 clone-max=2 \\
    clone-node-max=1 notify=true interleave=true
primitive app-pool-set ocf:rpmem:app-pool-set \\
    params pool_set=%(set)s pool_set_dir=/srv/rpmem/pools path=/srv/rpmem/app/app.set \\
      peers="%(peers)s" rpmemctl="%(rpmemctl)s" env_file=/srv/rpmem/cluster.env \\
    op start timeout=60s op monitor interval=30s
primitive app ocf:heartbeat:anything \\
    params binfile="%(app)s" cmdline_options="run /srv/rpmem/app/app.set" \\
      logfile=/srv/rpmem/app/app.log errlogfile=/srv/rpmem/app/app.err stop_timeout=20 \\
    op monitor interval=2s timeout=20s op stop timeout=30s \
    meta migration-threshold=2
group app-group app-pool-set app
colocation pool-with-rpmemd inf: pool-clone rpmemd-clone
order rpmemd-before-pool Mandatory: rpmemd-clone pool-clone
colocation app-with-primary inf: app-group pool-clone:Promoted
order primary-before-app Mandatory: pool-clone:promote app-group:start
"""


def bring_up(cluster):
    a, b = cluster.alpha, cluster.beta
    for node in cluster.nodes:
        node.power_on()

    def online():
        out = a.run(["crm_mon", "-1"], check=False).stdout
        return "Online: [ alpha beta ]" in out and "Current DC" in out
    wait_for("both nodes online", online, 60)
    load(a, CONFIG % {"rpmemd": os.environ["RPMEMD"], "socket": cluster.switch_path})

    def rpmemd_answers():
        for node in cluster.nodes:
            node.rpmemctl("status", node.target())
        return True
    wait_for("rpmemd on both nodes", rpmemd_answers, 60, 0.5)
    cluster.snapshot("cluster up, rpmemd running")

    # Bootstrap, as the example's runbook: replicate once to beta, then declare alpha primary.
    boot_set = "/srv/rpmem/app/bootstrap.set"
    with open(a.path("srv/rpmem/app/bootstrap.set"), "w") as f:
        f.write("PMEMPOOLSET\n%s /srv/rpmem/pools/app.part0\nREPLICA %s %s\n"
                % (POOL_SIZE, b.target(), SET))
    app = os.path.join(HERE, "app.sh")
    a.run([app, "create", boot_set], timeout=60)
    a.rpmemctl("promote", "--force", a.target(), SET)
    a.rpmemctl("rejoin", a.target(), SET, b.target(), SET)
    peers = " ".join("%s=%s" % (n.name, n.target()) for n in cluster.nodes)
    load(a, CONFIG_POOL % {"set": SET, "peers": peers, "rpmemctl": os.environ["RPMEMCTL"],
                           "app": app})
    wait_for("the application on alpha", lambda: app_running_on(a, a), 90)
    wait_for("alpha's application committing", lambda: committed_beyond(a, 100), 60)
    cluster.snapshot("resources configured, application on alpha")


def load(node, text):
    path = node.path("srv/rpmem/crm-load.txt")
    with open(path, "w") as f:
        f.write(text)
    node.crm("configure", "load", "update", "/srv/rpmem/crm-load.txt", timeout=60)


def scenario_failover(cluster, figures):
    a, b = cluster.alpha, cluster.beta
    generation = b.role(a)["generation"]
    # A power cut: alpha's link goes dark and every process of it dies at once.
    started = time.monotonic()
    cluster.link(a, up=False)
    a.power_off()
    acknowledged = last_committed(a)
    log("alpha cut off and killed with %d transactions acknowledged" % acknowledged)
    wait_for("the application running on beta", lambda: app_running_on(b, b), 90, 0.1)
    figures["failover_seconds"] = time.monotonic() - started
    cluster.snapshot("alpha killed; application on beta")
    log("failover: %.1f s from the kill to the application running on beta"
        % figures["failover_seconds"])
    fenced = [entry for entry in cluster.power_log if entry[1] == "off" and entry[2] == "alpha"
              and entry[0] >= started]
    if not fenced:
        raise StepFailed("beta's cluster never asked the power switch to fence alpha")
    history = b.run(["stonith_admin", "--history", "alpha"], check=False).stdout
    log("fencing history: " + history.strip())
    role = b.role(b)
    if role["state"] != "promoted" or role["generation"] != generation + 1:
        raise StepFailed("beta's copy is %s at generation %s, expected promoted at %d"
                         % (role["state"], role["generation"], generation + 1))
    runs = wait_for("beta's application to verify its pool", lambda: opens(b), 30)
    at_promote = runs[0]["verified"]
    log("beta's libpmemobj verified %d transactions at its open (alpha acknowledged %d)"
        % (at_promote, acknowledged))
    if at_promote < acknowledged:
        raise StepFailed("lost acknowledged transactions: %d acknowledged on alpha, %d on beta"
                         % (acknowledged, at_promote))
    wait_for("beta's application committing", lambda: committed_beyond(b, at_promote + 100), 60)
    figures["alpha_session"] = [s for s in opens(b)[0]["sessions"]]
    figures["beta_open_count"] = at_promote
    return "failover in %.1f s, %d acknowledged, %d on beta" % (
        figures["failover_seconds"], acknowledged, at_promote)


def scenario_rejoin(cluster, figures):
    a, b = cluster.alpha, cluster.beta
    generation = b.role(b)["generation"]
    a.power_on()

    def rejoined():
        role = b.role(a)
        return role["state"] != "promoted" and role["generation"] == generation and role
    role = wait_for("alpha's copy to become beta's replica", rejoined, 90, 0.5)
    log("alpha's copy: %s at generation %d" % (role["state"], role["generation"]))

    def replicating():
        with open(b.path("srv/rpmem/app/app.set")) as f:
            text = f.read()
        return "REPLICA %s" % a.target() in text and len(opens(b)) >= 2 and b.role(a)["in_use"]
    wait_for("beta's application reopened with alpha as its replica", replicating, 120, 0.5)
    count = opens(b)[-1]["verified"]
    wait_for("beta's application committing to alpha", lambda: committed_beyond(b, count + 100), 60)
    cluster.snapshot("alpha back as beta's replica")
    return "alpha rejoined at generation %d; beta's application replicates to it" % generation


def scenario_switchover(cluster, figures):
    a, b = cluster.alpha, cluster.beta
    runs_before = len(opens(a))
    a.crm("resource", "move", "app-group", "alpha", timeout=60)
    wait_for("the application moved to alpha", lambda: app_running_on(a, a), 120, 0.25)
    last_on_beta = last_committed(b)
    runs = wait_for("alpha's application to verify its pool",
                    lambda: len(opens(a)) > runs_before and opens(a), 30)
    opened = runs[-1]
    log("beta acknowledged %d; alpha's libpmemobj verified %d; sessions %s"
        % (last_on_beta, opened["verified"], opened["sessions"]))
    if opened["verified"] < last_on_beta:
        raise StepFailed("lost acknowledged transactions at the switchover: %d on beta, %d on alpha"
                         % (last_on_beta, opened["verified"]))
    # Alpha's copy was resynced from beta: nothing its killed session wrote past the count
    # beta opened with survives in it.
    for session, (first, last) in opened["sessions"].items():
        if session in figures.get("alpha_session", []) and last >= figures["beta_open_count"]:
            raise StepFailed("a write of alpha's old session landed: session %s transaction %d"
                             % (session, last))
    a.crm("resource", "clear", "app-group", timeout=60)
    wait_for("alpha's application committing", lambda: committed_beyond(a, opened["verified"] + 100),
             60)
    wait_for("beta's copy to become alpha's replica", lambda: a.role(b)["in_use"], 90, 0.5)
    cluster.snapshot("application back on alpha")
    return "switchover: %d acknowledged on beta, %d verified on alpha" % (
        last_on_beta, opened["verified"])


def scenario_split_brain(cluster, figures):
    a, b = cluster.alpha, cluster.beta
    generation = a.role(a)["generation"]
    a.crm("configure", "property", "stonith-enabled=false")
    cluster.cut()
    # Beta, seeing alpha gone and unable to fence, promotes its copy; alpha's application
    # cannot reach its replica and stops.
    wait_for("beta promoted without fencing", lambda: b.role(b)["state"] == "promoted", 90, 0.5)
    wait_for("the application on beta", lambda: app_running_on(b, b), 90, 0.25)
    cluster.snapshot("link cut: beta promoted without fencing")
    alpha_part = a.path("srv/rpmem/pools/app.part0")
    wait_for("alpha's application to stop", lambda: not app_running_on(a, a), 90, 0.5)
    with open(alpha_part, "rb") as f:
        alpha_bytes = f.read()
    cluster.heal()
    marker = a.path("srv/rpmem/pools/%s.split-brain" % SET)
    wait_for("alpha's agent to report the split brain", lambda: os.path.exists(marker), 90, 0.5)

    def reported():
        out = a.run(["crm_mon", "-1", "-r", "-f", "--show-detail"], check=False).stdout
        return "split brain" in out and out
    shown = wait_for("crm_mon to show the conflict", reported, 60, 0.5)
    cluster.snapshot("link healed: the conflict reported")
    log([l for l in shown.splitlines() if "split brain" in l][0].strip())
    # Neither copy is overwritten: alpha's old primary is refused by beta's newer copy...
    refused = a.run([os.path.join(HERE, "app.sh"), "verify", "/srv/rpmem/app/bootstrap.set"],
                    check=False, timeout=60)
    # (split brain when beta's copy is closed, busy while beta's application has it open)
    if refused.returncode == 0 or "opening remote replica" not in refused.stderr:
        raise StepFailed("alpha's libpmemobj was not refused by beta's newer copy: %s%s"
                         % (refused.stdout, refused.stderr))
    log("alpha's libpmemobj refused: " + refused.stderr.strip().splitlines()[-1])
    # ... and beta writes on without taking alpha's copy as a replica.
    count = last_committed(b)
    wait_for("beta's application committing", lambda: committed_beyond(b, count + 100), 60)
    with open(b.path("srv/rpmem/app/app.set")) as f:
        if "REPLICA" in f.read():
            raise StepFailed("beta's application took alpha's conflicting copy as its replica")
    role_a, role_b = b.role(a), b.role(b)
    if role_a["state"] != "promoted" or role_a["generation"] != generation:
        raise StepFailed("alpha's copy changed: %s" % role_a)
    with open(alpha_part, "rb") as f:
        if f.read()[4096:] != alpha_bytes[4096:]:
            raise StepFailed("alpha's copy was written after the link healed")
    cluster.snapshot("split brain: both copies kept")
    # The operator's runbook (README): beta's copy survives, alpha's is rejoined to it.
    runs_before = len(opens(b))
    a.crm("resource", "stop", "app-group", timeout=60)
    wait_for("the application stopped", lambda: "is running on" not in located(b, "app"), 60,
             0.25)
    last_committed_before_stop = last_committed(b)
    a.rpmemctl("rejoin", b.target(), SET, a.target(), SET)
    a.crm("resource", "cleanup", "pool-clone", timeout=60)
    a.crm("resource", "start", "app-group", timeout=60)
    wait_for("the split-brain marker cleared", lambda: not os.path.exists(marker), 60, 0.5)
    wait_for("beta's application replicating to alpha again",
             lambda: len(opens(b)) > runs_before and b.role(a)["in_use"], 90, 0.5)
    count = opens(b)[-1]["verified"]
    if count < last_committed_before_stop:
        raise StepFailed("beta's application verified %d transactions after the runbook, %d had "
                         "been acknowledged" % (count, last_committed_before_stop))
    wait_for("beta's application committing", lambda: committed_beyond(b, count + 100), 60)
    cluster.snapshot("split brain resolved by the runbook")
    return ("split brain refused: alpha promoted at %d, beta at %d, both kept; the runbook made "
            "alpha beta's replica" % (role_a["generation"], role_b["generation"]))


def main():
    reason = missing_precondition()
    if reason:
        print("1..0 # SKIP " + reason, flush=True)
        return 0
    scenarios = [("failover", scenario_failover), ("rejoin", scenario_rejoin),
                 ("switchover", scenario_switchover), ("split-brain", scenario_split_brain)]
    print("1..%d" % len(scenarios), flush=True)
    cluster = Cluster()
    figures = {}
    failed = False
    begun = time.monotonic()
    try:
        cluster.start_janitor()
        cluster.setup_network()
        cluster.write_files()
        cluster.serve_power_switch()
        try:
            bring_up(cluster)
            log("cluster up and application running in %.1f s" % (time.monotonic() - begun))
        except (StepFailed, subprocess.TimeoutExpired) as error:
            log("bringing the cluster up failed: %s" % error)
            cluster.report_failure()
            failed = True
        for number, (name, scenario) in enumerate(scenarios, 1):
            if failed:
                print("not ok %d - %s # an earlier step failed" % (number, name), flush=True)
                continue
            started = time.monotonic()
            try:
                summary = scenario(cluster, figures)
                print("ok %d - %s: %s (%.1f s)" % (number, name, summary,
                                                   time.monotonic() - started), flush=True)
            except (StepFailed, subprocess.TimeoutExpired, OSError, KeyError) as error:
                print("not ok %d - %s" % (number, name), flush=True)
                log(str(error))
                cluster.snapshot("%s failed" % name)
                cluster.report_failure()
                failed = True
    finally:
        cluster.remove()
    log("whole run: %.1f s" % (time.monotonic() - begun))
    if "failover_seconds" in figures:
        log("failover time (kill to application running on beta): %.1f s"
            % figures["failover_seconds"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
