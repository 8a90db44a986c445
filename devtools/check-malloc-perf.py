#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run malloc_perf and check what it writes; never its timings.

Usage:
  check-malloc-perf.py [checks] -- MALLOC_PERF [EAL args] -- [tool args]
  check-malloc-perf.py --help-check -- MALLOC_PERF
  check-malloc-perf.py --interactive -- MALLOC_PERF [EAL args] -- [tool args]
  check-malloc-perf.py --interactive-failures -- MALLOC_PERF [EAL args] -- [tool args]
  check-malloc-perf.py --sigint -- MALLOC_PERF [EAL args] -- [tool args]
  check-malloc-perf.py --main-blocks -- MALLOC_PERF [EAL args] -- [tool args]

A run is given --json and --csv files of its own, must exit with 0 (or
--expect-exit), and then: every selected workload is in the JSON file and
did not fail (but those of --expect-failed failed, and nothing more is
checked of them); every
selected backend (those that this build has) ran it or says why not; every
figure that must be there is; rates (ops, packets) are above zero; fwd
moved packets on every backend and ran `none`; paced has a latency CDF per
backend; pipeline ran wherever it had two lcores, and says why not where it
had one; pthreads has positive ratios (2 vs 1, vs lcore); paced did not
achieve more than its target; the CSV file has a row per workload, metric
and backend; one reference (rte when selected, never one not selected; or
--expect-reference) in the JSON, in each workload where it ran, in the CSV
rows, above each table and in the summary; the output holds each
--expect-output and no --expect-no-output.
--help-check: --help lists every option, backend and workload.
--interactive: commands piped into -i get their answers.
--interactive-failures: at the prompt, a JSON or CSV file that cannot be
written is said and a failed run is counted: either makes -i exit with 1.
--sigint: a SIGINT once the runs go (the first stats line) stops them: the
summary and the JSON file are written, the output says the figures are
partial, and the exit status is 130.
--main-blocks: while the runs go on other lcores, the main lcore's thread
sleeps until they end: it is switched in at most a few times in a second
(polling every 100 us, it woke thousands of times, on a CPU that a
workload's thread may share).
Exit status: 0 passed, 1 failed, 77 skipped (what the test needs is missing).
"""

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

SKIP = 77
OPTIONS = ["--backend", "--workload", "--lcores", "--duration", "--iterations", "--repeat",
           "--size", "--align", "--burst", "--rate", "--pkt-len", "--json", "--csv", "--quick",
           "--check", "--stats-period", "--seed", "--interactive", "--help"]
RATE_UNITS = ("Mpps", "Mops/s", "Mpairs/s", "Mblocks/s")
DEFAULT_BACKENDS = ["hpm", "rte"]
DEFAULT_WORKLOADS = ["seed-grow", "pair", "burst", "fwd"]
BASELINE = ("fwd", "paced")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def split_cmd(cmd):
    """MALLOC_PERF EAL... -- TOOL... -> (binary, eal, tool)."""
    if "--" in cmd[1:]:
        i = cmd.index("--", 1)
        return cmd[0], cmd[1:i], cmd[i + 1:]
    return cmd[0], cmd[1:], []


def help_lists(binary):
    """The backends and workloads that --help lists, and the whole text."""
    out = subprocess.run([binary, "--", "--help"], capture_output=True, text=True, timeout=30)
    text = out.stdout
    sections = {}
    current = None
    for line in text.splitlines():
        if line in ("Backends:", "Workloads:"):
            current = line[:-1].lower()
            sections[current] = []
            continue
        if current is None:
            continue
        if not line.strip():
            current = None
            continue
        m = re.match(r"^  (\S+)\s", line)
        if m:
            sections[current].append(m.group(1))
    return out.returncode, text, sections.get("backends", []), sections.get("workloads", [])


def opt_value(args, name):
    value = None
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(name + "="):
            value = a.split("=", 1)[1]
    return value


def expand(value, known, default):
    if value is None:
        return list(default)
    names = []
    for n in value.split(","):
        for x in (known if n == "all" else [n]):
            if x not in names:
                names.append(x)
    return names


def check_help(binary):
    rc, text, backends, workloads = help_lists(binary)
    if rc != 0:
        fail("--help exits with %d" % rc)
    for o in OPTIONS:
        if o not in text:
            fail("--help does not list %s" % o)
    for b in ["hpm", "hpm-locked", "rte", "mempool", "libc", "jemalloc", "mimalloc",
              "tcmalloc", "none"]:
        if b not in backends:
            fail("--help does not list backend %s" % b)
    for w in ["seed-grow", "granule-full", "pair", "burst", "scale", "pipeline", "pthreads",
              "contig", "churn", "mixed", "held", "paced", "fwd"]:
        if w not in workloads:
            fail("--help does not list workload %s" % w)
    for cmd in ["start", "stop", "show", "set", "help", "quit"]:
        if cmd not in text:
            fail("--help does not mention the prompt's %s" % cmd)


def check_run(args, cmd):
    binary, eal, tool = split_cmd(cmd)
    _, _, known_b, known_w = help_lists(binary)
    backends = expand(opt_value(tool, "--backend"), known_b, DEFAULT_BACKENDS)
    workloads = expand(opt_value(tool, "--workload"), known_w, DEFAULT_WORKLOADS)
    repeat = int(opt_value(tool, "--repeat") or 5)
    with tempfile.TemporaryDirectory() as tmp:
        jpath = os.path.join(tmp, "perf.json")
        cpath = os.path.join(tmp, "perf.csv")
        full = [binary] + eal + ["--"] + tool + ["--json", jpath, "--csv", cpath]
        print("+ " + " ".join(full), flush=True)
        try:
            proc = subprocess.run(full, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired as e:
            # a hang (never a timing): what it wrote, and the verdict
            sys.stdout.write(e.stdout.decode(errors="replace") if e.stdout else "")
            sys.stdout.write(e.stderr.decode(errors="replace") if e.stderr else "")
            fail("malloc_perf did not end within %d s" % args.timeout)
            return
        sys.stdout.write(proc.stdout)
        sys.stdout.write(proc.stderr)
        if proc.returncode != args.expect_exit:
            fail("malloc_perf exits with %d, expected %d" % (proc.returncode, args.expect_exit))
        for text in args.expect_output:
            if text not in proc.stdout + proc.stderr:
                fail("no %r in the output" % text)
        for text in args.expect_no_output:
            if text in proc.stdout + proc.stderr:
                fail("%r in the output" % text)
        if args.expect_memory and ("memory: " + args.expect_memory) not in proc.stdout and \
                not (args.expect_memory == "anonymous" and "anonymous memory" in proc.stdout):
            fail("the output does not say it runs on %s" % args.expect_memory)
        if "== Summary" not in proc.stdout:
            fail("no summary table")
        try:
            with open(jpath) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            fail("JSON file: %s" % e)
            return
        try:
            with open(cpath, newline="") as f:
                rows = list(csv.DictReader(f))
        except (OSError, csv.Error) as e:
            fail("CSV file: %s" % e)
            rows = []
    check_doc(args, doc, backends, workloads, repeat, rows)
    check_reference(args, doc, backends, rows, proc.stdout)


def check_reference(args, doc, backends, rows, out):
    """One reference for the whole run, the same in the JSON, the CSV and the text."""
    ref = doc.get("reference")
    usable = [b for b in backends if b not in doc.get("lacking", {})]
    if args.expect_reference:
        want = None if args.expect_reference == "null" else args.expect_reference
        if ref != want:
            fail("JSON: reference %r, expected %r" % (ref, want))
    elif "rte" in usable and ref != "rte":
        fail("JSON: reference %r although rte was selected" % ref)
    elif ref is not None and ref not in usable:
        fail("JSON: reference %r was not selected (%s)" % (ref, ",".join(usable)))
    ran = {}
    for w in doc.get("workloads", []):
        ran[w["name"]] = w.get("backends", [])
        want = ref if ref in ran[w["name"]] else None
        if w.get("reference") != want:
            fail("%s: reference %r, the run's is %r" % (w["name"], w.get("reference"), ref))
    for row in rows:
        want = ref if ref in ran.get(row["workload"], []) else ""
        if row["ref"] != (want or ""):
            fail("CSV: %s %s %s: ref %r, the run's is %r (the first such row)" %
                 (row["workload"], row["metric"], row["backend"], row["ref"], ref))
            break
    for name in re.findall(r"; vs (\S+): > 1 is better than", out) + \
            re.findall(r"no ratio: the reference, (\S+), does not run here", out):
        if name != ref:
            fail("a table compares with %s, the run's reference is %r" % (name, ref))
    m = re.search(r"== Summary: medians; 'X/(\S+)'", out)
    if (m.group(1) if m else None) != ref:
        fail("the summary compares with %s, the run's reference is %r" %
             (m.group(1) if m else "nothing", ref))


def check_doc(args, doc, backends, workloads, repeat, rows):
    if doc.get("tool") != "malloc_perf" or doc.get("format") != 2:
        fail("JSON: not malloc_perf format 2")
    if args.expect_memory and doc.get("memory") != args.expect_memory:
        fail("JSON: memory is %s, expected %s" % (doc.get("memory"), args.expect_memory))
    lacking = doc.get("lacking", {})
    for b in lacking:
        print("note: backend %s lacking: %s" % (b, lacking[b]))
    expected = [b for b in backends if b not in lacking]
    by_name = {w["name"]: w for w in doc.get("workloads", [])}
    nrows = 0
    for wname in workloads:
        w = by_name.get(wname)
        if w is None:
            fail("JSON: workload %s missing" % wname)
            continue
        if wname in args.expect_failed:
            if not w.get("failures"):
                fail("%s: no failed run, expected some" % wname)
            else:
                print("ok: %s failed, as expected" % wname)
            nrows += len(w.get("metrics", [])) * len(w.get("backends", []))
            continue
        if w.get("failures"):
            fail("%s: %d failed runs" % (wname, w["failures"]))
        ran = w.get("backends", [])
        for b in expected:
            if b not in ran and b not in w.get("skipped", {}):
                fail("%s: backend %s neither ran nor says why not" % (wname, b))
        for b, why in w.get("skipped", {}).items():
            if not why:
                fail("%s: backend %s skipped without a reason" % (wname, b))
        if wname in BASELINE and "none" not in ran:
            fail("%s: no `none` baseline" % wname)
        if wname == "pipeline":
            check_pipeline(w, expected, ran)
        if args.expect_lcores and wname in ("pair", "burst", "paced", "fwd") and \
                len(w.get("lcores", [])) != args.expect_lcores:
            fail("%s: ran on lcores %s, expected %d of them" %
                 (wname, w.get("lcores"), args.expect_lcores))
        if args.fwd_driver and wname == "fwd" and args.fwd_driver not in w.get("title", ""):
            fail("fwd: title %r does not name %s" % (w.get("title"), args.fwd_driver))
        nrows += len(w.get("metrics", [])) * len(ran)
        for m in w.get("metrics", []):
            for b in ran:
                check_metric(wname, m, b, repeat)
                if wname == "pthreads" and m.get("unit") == "x":
                    check_positive(wname, m, b)
        if wname in ("held", "mixed"):
            check_memory(w, ran)
        if wname == "paced":
            check_paced_rate(w, ran)
            lat = w.get("latency", {})
            for b in ran:
                cdf = lat.get(b, {}).get("cdf", [])
                if lat.get(b, {}).get("count", 0) <= 0 or not cdf:
                    fail("paced: no latency histogram for %s" % b)
                elif abs(cdf[-1][1] - 1.0) > 1e-6:
                    fail("paced: the CDF of %s does not end at 1" % b)
        print("ok: %s on %s" % (wname, ", ".join(ran)))
    if len(rows) != nrows:
        fail("CSV: %d rows, expected %d" % (len(rows), nrows))


def check_memory(w, ran):
    """Memory: no figure holds less than it keeps live, and every backend of a
    repetition replays the same steps of mixed (the same peak of live bytes)."""
    for m in w.get("metrics", []):
        name = m.get("name", "")
        for b in ran:
            runs = m.get("backends", {}).get(b, {}).get("runs", [])
            if m.get("unit") == "x" and name.endswith("held/live"):
                for v in runs:
                    if v is not None and v < 0.99:
                        fail("%s: %s %s is %g: held below live" % (w["name"], b, name, v))
        if w["name"] == "mixed" and name == "peak live":
            per_rep = [m.get("backends", {}).get(b, {}).get("runs", []) for b in ran]
            check_fit_model(w, [r[0] for r in per_rep if r and r[0] is not None])
            for rep, vals in enumerate(zip(*per_rep)):
                vals = [v for v in vals if v is not None]
                if vals and max(vals) - min(vals) > 1e-6 * max(vals):
                    fail("mixed: repetition %d: peak live differs between backends: %s"
                         % (rep + 1, dict(zip(ran, vals))))


def check_fit_model(w, first_rep_live):
    """The title's best fit replays the first repetition's steps (the same peak
    live, to its two decimals), and holds no less than that peak."""
    found = re.search(r"would hold ([0-9.]+)x its peak live of ([0-9.]+) MiB, "
                      r"([0-9.]+)x with no block across 2 MiB", w.get("title", ""))
    if not found:
        fail("mixed: title %r has no best-fit figures" % w.get("title"))
        return
    flat, live, paged = (float(x) for x in found.groups())
    if flat < 1.0 or paged < 1.0:
        fail("mixed: the best fit holds %gx and %gx: below its peak live" % (flat, paged))
    for v in first_rep_live:
        if abs(v - live) > 0.006:
            fail("mixed: the best fit's peak live %g MiB is not repetition 1's %g"
                 % (live, v))


def check_paced_rate(w, ran):
    """The bucket makes one operation due per period: no more than the target."""
    med = {}
    for m in w.get("metrics", []):
        if m.get("name") in ("target", "achieved"):
            med[m["name"]] = {b: m.get("backends", {}).get(b, {}).get("median") for b in ran}
    for b in ran:
        t, a = med.get("target", {}).get(b), med.get("achieved", {}).get(b)
        if t is not None and a is not None and a > t * (1 + 1e-9):
            fail("paced: %s achieved %g Mops/s, above its target %g" % (b, a, t))


def check_pipeline(w, expected, ran):
    """Two lcores (or more): every backend ran; one: each says it needs two."""
    two = len(w.get("lcores", [])) >= 2
    for b in expected:
        why = w.get("skipped", {}).get(b, "")
        if two and b not in ran:
            fail("pipeline: backend %s did not run on lcores %s: %s" % (b, w.get("lcores"), why))
        if not two and b in ran:
            fail("pipeline: backend %s ran on one lcore" % b)
        if not two and "two lcores" not in why:
            fail("pipeline: backend %s skipped on one lcore without saying why: %r" % (b, why))


def check_positive(wname, m, b):
    runs = m.get("backends", {}).get(b, {}).get("runs", [])
    if not all(v is not None and v > 0 for v in runs):
        fail("%s: %s (%s) on %s: not above zero (%s)" % (wname, m.get("name"), m.get("unit"),
                                                          b, runs))


def check_metric(wname, m, b, repeat):
    fig = m.get("backends", {}).get(b)
    label = "%s: %s (%s) on %s" % (wname, m.get("name"), m.get("unit"), b)
    if fig is None:
        fail(label + ": missing")
        return
    runs = fig.get("runs", [])
    if len(runs) != repeat:
        fail(label + ": %d runs, expected %d" % (len(runs), repeat))
    if m.get("optional"):
        return
    if any(v is None for v in runs):
        fail(label + ": a run has no value")
        return
    if m.get("unit") in RATE_UNITS or (wname == "fwd" and m.get("name") == "packets"):
        if not all(v > 0 for v in runs):
            fail(label + ": no operations (%s)" % runs)


INTERACTIVE = [
    ("help", ["commands:", "set KEY VALUE", "workloads: seed-grow"]),
    ("show config", ["backend", "workload", "until stop"]),
    ("set backend hpm,rte", ["backend = hpm,rte"]),
    ("set size abc", ["set size: "]),
    ("set workload pair", ["workload = pair"]),
    ("set size 4K", ["size = 4K"]),
    ("set align 4K", ["align = 4K"]),
    ("set duration 0.01", ["duration = 0.01"]),
    ("start", ["started: pair on hpm,rte"]),
    ("wait", ["== pair:", "4 KiB align 4 KiB", "run done"]),
    ("show stats", ["idle"]),
    ("show heap", ["hpm", "rte", "cache:"]),
    ("set workload fwd", ["workload = fwd"]),
    ("set backend hpm-locked", ["backend = hpm-locked"]),
    ("set duration 0", ["duration = 0"]),
    ("start", ["started: fwd on hpm-locked (until stop)"]),
    ("show stats", ["fwd hpm-locked"]),
    ("stop", ["== fwd:", "forwarded", "stopped"]),
    ("stop", ["not running"]),
    # `none` has no memory of its own: no process RSS on its stats line
    ("set backend none", ["backend = none"]),
    ("start", ["started: fwd on none (until stop)"]),
    ("show stats", ["fwd none"], ["rss", "heap"]),
    ("stop", ["== fwd:", "stopped"]),
    ("quit", []),
]

# Each script must make -i exit with 1 and say what failed.
INTERACTIVE_FAILURES = [
    # the run itself succeeds: only its files fail
    (["set json /nonexistent/dir/x.json", "set csv /nonexistent/dir/x.csv",
      "set workload pair", "set backend hpm", "set duration 0.01", "start", "wait", "quit"],
     ["cannot write /nonexistent/dir/x.json: No such file or directory",
      "cannot write /nonexistent/dir/x.csv: No such file or directory",
      "run done, with failures"]),
    # no block of 512 GiB: the run fails
    (["set workload pair", "set backend hpm", "set size 512G", "set duration 0.01", "start",
      "wait", "quit"],
     ["hpm (failed: ", "run done, with failures"]),
]


def check_interactive(args, cmd):
    binary, eal, tool = split_cmd(cmd)
    full = [binary] + eal + ["--"] + tool + ["-i"]
    script = "".join(e[0] + "\n" for e in INTERACTIVE)
    print("+ " + " ".join(full) + " <<'EOF'\n" + script + "EOF", flush=True)
    proc = subprocess.run(full, input=script, capture_output=True, text=True,
                          timeout=args.timeout)
    out = proc.stdout
    sys.stdout.write(out)
    sys.stdout.write(proc.stderr)
    if proc.returncode != 0:
        fail("malloc_perf -i exits with %d" % proc.returncode)
    # each command's answer lies between its echo and the next prompt's echo
    pos = 0
    for command, answers, *absent in INTERACTIVE:
        at = out.find("malloc_perf> " + command, pos)
        if at < 0:
            fail("no echo of %r" % command)
            continue
        at += len("malloc_perf> ")
        nxt = out.find("malloc_perf> ", at)
        chunk = out[at:nxt if nxt >= 0 else len(out)]
        for a in answers:
            if a not in chunk:
                fail("%r: no %r in its answer" % (command, a))
        for a in (absent[0] if absent else []):
            if a in chunk:
                fail("%r: %r in its answer" % (command, a))
        pos = at + len(command)
    if "Bad arguments" in out:
        fail("a command was not understood")


def check_interactive_failures(args, cmd):
    binary, eal, tool = split_cmd(cmd)
    full = [binary] + eal + ["--"] + tool + ["-i"]
    for commands, said in INTERACTIVE_FAILURES:
        script = "".join(c + "\n" for c in commands)
        print("+ " + " ".join(full) + " <<'EOF'\n" + script + "EOF", flush=True)
        proc = subprocess.run(full, input=script, capture_output=True, text=True,
                              timeout=args.timeout)
        sys.stdout.write(proc.stdout)
        sys.stdout.write(proc.stderr)
        if proc.returncode != 1:
            fail("malloc_perf -i exits with %d after a failure, not 1" % proc.returncode)
        for a in said:
            if a not in proc.stdout + proc.stderr:
                fail("no %r in the output" % a)
        if "Bad arguments" in proc.stdout:
            fail("a command was not understood")


def finish(proc, timeout, seen, after):
    """Wait for a run whose stderr was read up to seen; its stdout, None on a timeout."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("malloc_perf did not end within %d s%s" % (timeout, after))
        return None
    sys.stdout.write(out)
    sys.stdout.write(seen + err)
    return out


def check_sigint(args, cmd):
    """A SIGINT once the runs go: partial figures, files written, exit 130."""
    binary, eal, tool = split_cmd(cmd)
    with tempfile.TemporaryDirectory() as tmp:
        jpath = os.path.join(tmp, "perf.json")
        full = [binary] + eal + ["--"] + tool + ["--json", jpath, "--stats-period", "1"]
        print("+ " + " ".join(full), flush=True)
        proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        # a stats line ("[    1.0s] pair hpm ...", stderr, unbuffered): the runs go
        first = ""
        sent = False
        for line in proc.stderr:
            first += line
            if line.startswith("["):
                proc.send_signal(signal.SIGINT)
                sent = True
                break
        out = finish(proc, args.timeout, first, " of a SIGINT")
        if out is None:
            return
        if not sent:
            fail("no stats line before the end (exit %d): no SIGINT sent" % proc.returncode)
            return
        if proc.returncode != 130:
            fail("malloc_perf exits with %d after a SIGINT, expected 130" % proc.returncode)
        if "stopped (SIGINT)" not in out:
            fail("the output does not say the figures are partial")
        if "== Summary" not in out:
            fail("no summary table after a SIGINT")
        try:
            with open(jpath) as f:
                json.load(f)
        except (OSError, ValueError) as e:
            fail("JSON file after a SIGINT: %s" % e)


def ctxt_switches(pid):
    """Context switches of the process's main thread, or None once it is gone."""
    try:
        with open("/proc/%d/task/%d/status" % (pid, pid)) as f:
            return sum(int(line.split()[1]) for line in f
                       if line.startswith(("voluntary_ctxt_switches",
                                           "nonvoluntary_ctxt_switches")))
    except (OSError, ValueError, IndexError):
        return None


def check_main_blocks(args, cmd):
    """The main lcore waits for the runs without waking: a second of one, few switches."""
    binary, eal, tool = split_cmd(cmd)
    full = [binary] + eal + ["--"] + tool + ["--stats-period", "1"]
    print("+ " + " ".join(full), flush=True)
    proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = ""
    before = after = None
    for line in proc.stderr:
        seen += line
        # the first stats line: the runs go; the second, a second later
        if line.startswith("["):
            if before is None:
                before = ctxt_switches(proc.pid)
            else:
                after = ctxt_switches(proc.pid)
                break
    if finish(proc, args.timeout, seen, "") is None:
        return
    if proc.returncode != 0:
        fail("malloc_perf exits with %d" % proc.returncode)
    if before is None or after is None:
        fail("fewer than two stats lines: the runs were too short to watch")
        return
    print("main thread: %d context switches between two stats lines" % (after - before))
    if after - before > 20:
        fail("the main lcore's thread was switched in %d times in a second while it waited"
             % (after - before))


def enough_cpus(n):
    try:
        return len(os.sched_getaffinity(0)) >= n
    except AttributeError:
        return (os.cpu_count() or 1) >= n


def enough_hugepages(mib):
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        free = int(info["HugePages_Free"].split()[0])
        size = int(info["Hugepagesize"].split()[0])
        return free * size >= mib * 1024
    except (OSError, KeyError, ValueError):
        return False


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--help-check", action="store_true")
    p.add_argument("--interactive", action="store_true")
    p.add_argument("--interactive-failures", action="store_true")
    p.add_argument("--sigint", action="store_true")
    p.add_argument("--main-blocks", action="store_true")
    p.add_argument("--expect-exit", type=int, default=0)
    p.add_argument("--expect-output", action="append", default=[])
    p.add_argument("--expect-no-output", action="append", default=[])
    p.add_argument("--expect-failed", action="append", default=[])
    p.add_argument("--expect-reference")
    p.add_argument("--expect-lcores", type=int, default=0)
    p.add_argument("--expect-memory", choices=["hugepages", "anonymous"])
    p.add_argument("--fwd-driver")
    p.add_argument("--need-cpus", type=int, default=1)
    p.add_argument("--need-hugepages-mib", type=int, default=0)
    p.add_argument("--timeout", type=int, default=240)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    args = p.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        p.error("no malloc_perf command")
    if not enough_cpus(args.need_cpus):
        print("skip: fewer than %d CPUs" % args.need_cpus)
        return SKIP
    if args.need_hugepages_mib and not enough_hugepages(args.need_hugepages_mib):
        print("skip: fewer than %d MiB of free hugepages" % args.need_hugepages_mib)
        return SKIP
    if args.help_check:
        check_help(cmd[0])
    elif args.interactive:
        check_interactive(args, cmd)
    elif args.interactive_failures:
        check_interactive_failures(args, cmd)
    elif args.sigint:
        check_sigint(args, cmd)
    elif args.main_blocks:
        check_main_blocks(args, cmd)
    else:
        check_run(args, cmd)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
