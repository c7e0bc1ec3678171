#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Installs the build into a scratch DESTDIR (meson install --destdir) and checks what a package
would ship: librpmem.so.1 with its SONAME (and no libfabric at load time), the header, the
pkg-config file, the programs, the systemd unit, the example config and the man pages, each
rendering with `man -l` without a warning.

usage: check-install.py BUILD_DIR PREFIX LIBDIR BINDIR SBINDIR INCLUDEDIR DATADIR MANDIR UNITDIR
       [PAGE...]
"""
import os
import subprocess
import sys
import tempfile

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kwargs)


def main():
    build, prefix, libdir, bindir, sbindir, includedir, datadir, mandir, unitdir = sys.argv[1:10]
    pages = sys.argv[10:]
    with tempfile.TemporaryDirectory(prefix="rpmem-install-") as destdir:
        installed = run(["meson", "install", "-C", build, "--no-rebuild", "--quiet",
                         "--destdir", destdir])
        if not check(installed.returncode == 0, "meson install failed:\n" + installed.stdout
                     + installed.stderr):
            return report()
        root = destdir + prefix

        def under(directory, name):
            # An absolute directory (say -Dsystemd_system_unit_dir=/lib/systemd/system) is
            # installed beneath DESTDIR itself, not beneath DESTDIR/PREFIX.
            return os.path.join(destdir + directory if os.path.isabs(directory) else
                                os.path.join(root, directory), name)

        library = under(libdir, "librpmem.so.1")
        if check(os.path.exists(library), f"missing {library}"):
            dynamic = run(["readelf", "--dynamic", library]).stdout
            check("Library soname: [librpmem.so.1]" in dynamic,
                  f"{library}: SONAME is not librpmem.so.1:\n{dynamic}")
            check("libfabric" not in dynamic, f"{library} needs libfabric at load time")
        check(os.path.islink(under(libdir, "librpmem.so")), "missing the librpmem.so link")
        check(os.path.isfile(under(includedir, "librpmem.h")), "missing librpmem.h")

        pc_dir = under(libdir, "pkgconfig")
        if check(os.path.isfile(os.path.join(pc_dir, "librpmem.pc")), "missing librpmem.pc"):
            env = dict(os.environ, PKG_CONFIG_PATH=pc_dir, PKG_CONFIG_LIBDIR=pc_dir)
            flags = run(["pkg-config", "--define-prefix", "--libs", "--cflags", "librpmem"],
                        env=env)
            check(flags.returncode == 0 and "-lrpmem" in flags.stdout,
                  f"pkg-config librpmem: {flags.stdout}{flags.stderr}")

        for directory, program in [(sbindir, "rpmemd"), (bindir, "rpmemctl"),
                                   (bindir, "rpmem-bench"), (bindir, "rpmem-ssh"),
                                   (bindir, "rpmem-hello"), (bindir, "rpmem-bench-plot")]:
            path = under(directory, program)
            check(os.path.isfile(path) and os.access(path, os.X_OK),
                  f"missing the program {path}")
        check(os.path.isfile(under(unitdir, "rpmemd.service")), "missing the systemd unit")
        check(os.path.isfile(under(datadir, "doc/rpmem/rpmemd.conf.example")),
              "missing rpmemd.conf.example")

        for page in pages:
            section = page.rsplit(".", 1)[1]
            path = under(mandir, f"man{section}/{page}")
            if not check(os.path.isfile(path), f"missing the man page {path}"):
                continue
            rendered = run(["man", "--warnings", "-l", path],
                           env=dict(os.environ, MANWIDTH="80",
                                    LC_ALL="C.UTF-8", MANPAGER="cat", PAGER="cat"))
            check(rendered.returncode == 0 and rendered.stderr == "",
                  f"man -l {page}: status {rendered.returncode}, warnings:\n{rendered.stderr}")
            check("NAME" in rendered.stdout and "SEE ALSO" in rendered.stdout,
                  f"man -l {page} rendered no NAME or SEE ALSO section")
    return report()


def report():
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("installed tree complete")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
