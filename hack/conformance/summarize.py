#!/usr/bin/env python3
"""Summarize a ginkgo JSON report of an e2e run: passed / failed / skipped, the failures with their
first message line, and apart from the rest the specs that say nothing about the node because they
pass with no kubelet behind it (--apart: lists/vacuous.txt for the [NodeConformance] set,
lists/conformance-api-only.txt, the specs that never need a running pod, for the [Conformance] set).

Usage: summarize.py REPORT.json [--list SPECS.txt] [--apart SPECS.txt] [--apart-name NAME]
With --list the counts are over the names in the file (a listed spec the run did not reach is
"not run"); without it, over the specs the run selected. Exit status 1 when a spec failed or did not run.
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
STATES = ('passed', 'failed', 'skipped', 'not run')


def names(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith('#')]


def counts(by, subset, states=STATES):
    """'3 passed, 1 failed' over the names in subset (states with none left out, passed always shown)."""
    parts = []
    for k in states:
        n = sum(1 for x in by[k] if x in subset)
        if n or k == 'passed':
            parts.append(f"{n} {k}")
    return ', '.join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('report')
    ap.add_argument('--list')
    ap.add_argument('--apart', default=os.path.join(HERE, 'lists', 'vacuous.txt'),
                    help='specs counted apart: they pass with no kubelet at all')
    ap.add_argument('--apart-name', default='vacuous',
                    help='what to call them: vacuous (the default set) or api-only (the [Conformance] set)')
    a = ap.parse_args()
    with open(a.report) as f:
        suite = json.load(f)[0]
    specs = suite['SpecReports']
    ran = {}  # full spec name -> (state, failure, seconds)
    for s in specs:
        # specs the focus filtered out are "skipped" with no attempt; Skip() at run time has one
        if s['LeafNodeType'] != 'It' or (s['State'] == 'skipped' and not s.get('NumAttempts')):
            continue
        ran[' '.join(s['ContainerHierarchyTexts'] + [s['LeafNodeText']])] = (
            s['State'], s.get('Failure') or {}, (s.get('RunTime') or 0) / 1e9)
    universe = names(a.list) if a.list else sorted(ran)
    apart = set(names(a.apart)) if a.apart else set()
    by = {k: [] for k in STATES}
    for n in universe:
        state = ran.get(n, ('not run',))[0]
        by[state if state in by else 'failed'].append(n)

    total = len(universe)
    print(f"{total} specs{' (' + os.path.basename(a.list) + ')' if a.list else ''}:")
    for k, v in by.items():
        if v or k != 'not run':
            print(f"  {k:8} {len(v):4}")
    ua = {n for n in universe if n in apart}
    rest = set(universe) - ua
    if a.apart:
        print(f"  {a.apart_name} ({len(ua)}, {os.path.basename(a.apart)}; they pass with no kubelet behind the node): "
              f"{counts(by, ua)}")
        others = counts(by, rest, STATES[1:])
        print(f"  without them: {sum(1 for n in by['passed'] if n in rest)} passed of {len(rest)}"
              f"{' (' + others + ')' if others else ''}")
    spec_time = sum(r[2] for n, r in ran.items() if n in set(universe))
    wall = (suite.get('RunTime') or 0) / 1e9
    print(f"  time: {wall / 60:.1f} min of suite, {spec_time / 60:.1f} min of spec time")

    def where(fail):
        loc = fail.get('Location') or {}
        msg = (fail.get('Message') or '').strip().splitlines()
        f = os.path.basename(loc.get('FileName', ''))
        return f"{f}:{loc.get('LineNumber', '')} {msg[0][:200] if msg else ''}".strip()

    def tag(n):
        return f" [{a.apart_name}]" if n in ua else ''
    for k in ('failed', 'not run', 'skipped'):
        if by[k]:
            print(f"\n{k} ({len(by[k])}):")
            for n in by[k]:
                print(f"  {n}{tag(n)}")
                if n in ran:
                    print(f"      {ran[n][2]:.0f}s {where(ran[n][1])}")
    vp = [n for n in by['passed'] if n in ua]
    if vp and len(ua) <= 20:
        print(f"\n{a.apart_name} passes ({len(vp)}; they pass with no kubelet behind the node):")
        for n in vp:
            print(f"  {n}")
    return 1 if by['failed'] or by['not run'] else 0


if __name__ == '__main__':
    raise SystemExit(main())
