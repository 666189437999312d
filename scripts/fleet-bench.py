#!/usr/bin/env python3
"""A store at fleet scale (issue 38): N hosts x R runs, in SQLite and PostgreSQL.

Builds N x R run documents from a real one (tests/fixtures/fleet/quick-run.json,
a quick run of a 2-core VM: 185 records, 545 KB), each host with its own name,
rack and batch tags and its figures scaled by a factor of its own (every
repetition scaled, so each figure keeps the real run's noise), imports them
into a fresh SQLite store and a fresh PostgreSQL database (a throwaway server
made with initdb, as tests/common/pg.rs does), and times, on each store:

  import            cpuscope import, BATCH documents per call (runs/s)
  runs --host       one host's runs
  show              one run, text
  compare --host    two hosts' runs side by side
  fleet             every host's latest run, text, and --html (then its size)

with each command's peak resident memory (getrusage of the child) and the
store's size per run. Prints one table per store. Needs the release binary
($CPUSCOPE, else target/release/cpuscope) and, for PostgreSQL, initdb/pg_ctl/
postgres (Debian: /usr/lib/postgresql/*/bin) and root or a normal user.

  scripts/fleet-bench.py --hosts 1000 --runs 3            # both stores
  scripts/fleet-bench.py --hosts 10000 --runs 3 --store sqlite --work /big/dir

Goals (issue 38): fleet over 10,000 hosts <= 5 s, runs/show <= 0.5 s, import
>= 100 runs/s, memory bounded. A command over --timeout seconds is killed and
reported as such.
"""

import argparse
import copy
import glob
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TEMPLATE = os.path.join(REPO, "tests/fixtures/fleet/quick-run.json")


def scale_record(r, f):
    if r.get("samples"):
        r["samples"] = [x * f for x in r["samples"]]
    if isinstance(r.get("value"), (int, float)):
        r["value"] *= f
    st = r.get("stats")
    if isinstance(st, dict):
        for k in ("median", "min", "max", "mean", "stddev"):
            if isinstance(st.get(k), (int, float)):
                st[k] *= f


def make_docs(n_hosts, n_runs, out_dir):
    """Write the documents, one file per run; returns their paths in import order."""
    with open(TEMPLATE, encoding="utf-8") as f:
        base = json.load(f)
    rng = random.Random(38)
    paths = []
    for h in range(n_hosts):
        host = "host%05d" % h
        f_host = rng.uniform(0.97, 1.03)
        for r in range(n_runs):
            doc = copy.deepcopy(base)
            day, sec = 1 + r, h * 7 % 86400
            stamp = "202611%02dT%02d%02d%02dZ" % (day, sec // 3600, sec % 3600 // 60, sec % 60)
            doc["id"] = "%s-%s-%04x" % (stamp, host, rng.randrange(1 << 16))
            doc["host"] = host
            doc["started_at"] = "2026-11-%02dT%02d:%02d:%02dZ" % (day, sec // 3600, sec % 3600 // 60, sec % 60)
            doc["finished_at"] = doc["started_at"]
            doc["tags"] = ["batch=b%d" % r, "rack=r%02d" % (h % 40), "inventory=%s" % host]
            f_run = f_host * rng.uniform(0.99, 1.01)
            for rec in doc["results"]:
                scale_record(rec, f_run)
            p = os.path.join(out_dir, "%s.json" % doc["id"])
            with open(p, "w", encoding="utf-8") as f:
                json.dump(doc, f, separators=(",", ":"))
            paths.append(p)
    return paths


def timed(cmd, timeout, out_path=None):
    """Run cmd; (seconds, peak RSS MiB of the children so far, exit code or
    'timeout', the last line of its standard error)."""
    t = time.monotonic()
    with open(out_path or os.devnull, "wb") as out:
        try:
            p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, timeout=timeout)
            rc = p.returncode
            err = p.stderr.decode(errors="replace").strip().splitlines()
        except subprocess.TimeoutExpired:
            rc, err = "timeout", []
    dt = time.monotonic() - t
    # ru_maxrss of children is the largest of any child so far: this
    # child's peak when it raised it, else at most that (the table says so).
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return dt, rss, rc, (err[-1] if err else "")


def pg_server(work):
    """Start a throwaway PostgreSQL server; returns (url, stop function)."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    bindir = next((b for b in reversed(bins) if os.path.exists(os.path.join(b, "initdb"))), None)
    if bindir is None:
        sys.exit("fleet-bench: no PostgreSQL server binaries (apt-get install postgresql)")
    data = os.path.join(work, "pgdata")
    sock = os.path.join(work, "pgsock")
    os.makedirs(sock, exist_ok=True)
    user = None
    pre = []
    if os.geteuid() == 0:
        user = "postgres"
        os.chmod(os.path.dirname(work), 0o755)
        shutil.chown(work, user)
        shutil.chown(sock, user)
        pre = ["runuser", "-u", user, "--"]
    subprocess.run(pre + [os.path.join(bindir, "initdb"), "-D", data, "-U", "cpuscope", "--auth=trust"],
                   check=True, stdout=subprocess.DEVNULL)
    port = str(20000 + os.getpid() % 20000)
    subprocess.run(pre + [os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-l", os.path.join(work, "pg.log"),
                          "-o", "-p %s -k %s -c listen_addresses=127.0.0.1 -c fsync=on" % (port, sock), "start"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(pre + [os.path.join(bindir, "createdb"), "-h", sock, "-p", port, "-U", "cpuscope", "fleet"],
                   check=True)

    def stop():
        subprocess.run(pre + [os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "fast", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return "postgres://cpuscope@127.0.0.1:%s/fleet" % port, stop, (pre, bindir, sock, port)


def bench(exe, store, docs, args, work, label, size_of):
    rows = []
    base = [exe, "--store", store]
    t_imp, rss_imp, fails = 0.0, 0.0, []
    for i in range(0, len(docs), args.batch):
        dt, rss, rc, err = timed(base + ["import"] + docs[i:i + args.batch], args.timeout)
        t_imp += dt
        rss_imp = max(rss_imp, rss)
        if rc != 0:
            fails.append("batch %d: exit %s %s" % (i // args.batch, rc, err))
            break
        if (i // args.batch) % 20 == 0:
            sys.stderr.write("\r%s: imported %d of %d runs (%.0f runs/s)" % (
                label, min(i + args.batch, len(docs)), len(docs), min(i + args.batch, len(docs)) / t_imp))
    sys.stderr.write("\n")
    n = len(docs)
    rows.append(("import (%d per call)" % args.batch, t_imp, "%.0f runs/s" % (n / t_imp), rss_imp,
                 "; ".join(fails) or "ok"))
    a, b = "host%05d" % 0, "host%05d" % (args.hosts // 2)
    some_id = os.path.basename(docs[len(docs) // 2])[:-5]
    html = os.path.join(work, "fleet-%s.html" % label)
    for name, cmd, out in [
        ("runs --host", base + ["runs", "--host", a], None),
        ("runs (all)", base + ["runs", "--json"], None),
        ("show RUN", base + ["show", some_id], None),
        ("compare --host A --host B", base + ["compare", "--host", a, "--host", b], None),
        ("fleet (text)", base + ["fleet"], None),
        ("fleet --html", base + ["fleet", "--html", html], None),
    ]:
        dt, rss, rc, err = timed(cmd, args.timeout, out)
        what = "ok" if rc == 0 else "exit %s %s" % (rc, err)
        extra = ""
        if name == "fleet --html" and rc == 0 and os.path.exists(html):
            extra = "%.1f MB page" % (os.path.getsize(html) / 1e6)
        rows.append((name, dt, extra, rss, what))
    size = size_of()
    print("\n%s: %d hosts x %d runs = %d runs; store %.1f MB (%.0f KB per run)" % (
        label, args.hosts, args.runs, n, size / 1e6, size / 1e3 / n))
    print("%-28s %9s %16s %12s  %s" % ("command", "seconds", "", "peak RSS*", "result"))
    for name, dt, extra, rss, what in rows:
        print("%-28s %9.2f %16s %9.0f MiB  %s" % (name, dt, extra, rss, what))
    print("* the largest of the commands so far (getrusage of the children): a row's own peak when it grows")
    sys.stdout.flush()


def dir_size(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--store", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--batch", type=int, default=100, help="documents per import call")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before a command is killed")
    ap.add_argument("--work", help="directory for documents and stores (default: a temporary one, removed)")
    args = ap.parse_args()
    if args.hosts < 2 or args.runs < 1 or args.batch < 1:
        sys.exit("fleet-bench: --hosts >= 2, --runs >= 1, --batch >= 1")
    exe = os.environ.get("CPUSCOPE") or os.path.join(REPO, "target/release/cpuscope")
    if not os.access(exe, os.X_OK):
        sys.exit("fleet-bench: %s not found (cargo build --release)" % exe)
    work = args.work or tempfile.mkdtemp(prefix="cpuscope-fleet-bench.")
    os.makedirs(work, exist_ok=True)
    try:
        docs_dir = os.path.join(work, "docs")
        os.makedirs(docs_dir, exist_ok=True)
        t = time.monotonic()
        docs = make_docs(args.hosts, args.runs, docs_dir)
        print("made %d documents (%.0f MB) in %.0f s" % (len(docs), dir_size(docs_dir) / 1e6, time.monotonic() - t))
        if args.store in ("sqlite", "both"):
            db = os.path.join(work, "fleet.db")
            bench(exe, db, docs, args, work, "SQLite",
                  lambda: sum(os.path.getsize(p) for p in glob.glob(db + "*")))
        if args.store in ("postgres", "both"):
            pgw = os.path.join(work, "pg")
            os.makedirs(pgw, exist_ok=True)
            url, stop, (pre, bindir, sock, port) = pg_server(pgw)
            try:
                def pg_size():
                    q = subprocess.run(pre + [os.path.join(bindir, "psql"), "-h", sock, "-p", port, "-U", "cpuscope",
                                              "-d", "fleet", "-Atc", "SELECT pg_database_size('fleet')"],
                                       stdout=subprocess.PIPE, check=True)
                    return int(q.stdout.strip())
                bench(exe, url, docs, args, work, "PostgreSQL", pg_size)
            finally:
                stop()
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
