#!/usr/bin/env python3
"""Summarize a ginkgo JSON report of an e2e run: passed / failed / skipped, the failures with their
first message line, and the passes that would pass with no kubelet at all (lists/vacuous.txt).

Usage: summarize.py REPORT.json [--list SPECS.txt]
With --list the counts are over the names in the file (a listed spec the run did not reach is
"not run"); without it, over the specs the run selected. Exit status 1 when a spec failed or did not run.
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def names(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith('#')]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('report')
    ap.add_argument('--list')
    ap.add_argument('--vacuous', default=os.path.join(HERE, 'lists', 'vacuous.txt'))
    a = ap.parse_args()
    with open(a.report) as f:
        specs = json.load(f)[0]['SpecReports']
    ran = {}  # full spec name -> (state, failure)
    for s in specs:
        # specs the focus filtered out are "skipped" with no attempt; Skip() at run time has one
        if s['LeafNodeType'] != 'It' or (s['State'] == 'skipped' and not s.get('NumAttempts')):
            continue
        ran[' '.join(s['ContainerHierarchyTexts'] + [s['LeafNodeText']])] = (s['State'], s.get('Failure') or {})
    universe = names(a.list) if a.list else sorted(ran)
    vacuous = set(names(a.vacuous))
    by = {'passed': [], 'failed': [], 'skipped': [], 'not run': []}
    for n in universe:
        state = ran.get(n, ('not run', {}))[0]
        by[state if state in by else 'failed'].append(n)

    total = len(universe)
    print(f"{total} specs{' (' + os.path.basename(a.list) + ')' if a.list else ''}:")
    for k, v in by.items():
        if v or k != 'not run':
            print(f"  {k:8} {len(v):4}")
    vp = [n for n in by['passed'] if n in vacuous]
    vu = [n for n in universe if n in vacuous]
    print(f"  without the {len(vu)} specs that pass with no kubelet at all: "
          f"{len(by['passed']) - len(vp)} passed of {total - len(vu)}")

    def where(fail):
        loc = fail.get('Location') or {}
        msg = (fail.get('Message') or '').strip().splitlines()
        f = os.path.basename(loc.get('FileName', ''))
        return f"{f}:{loc.get('LineNumber', '')} {msg[0][:200] if msg else ''}".strip()
    for k in ('failed', 'not run', 'skipped'):
        if by[k]:
            print(f"\n{k} ({len(by[k])}):")
            for n in by[k]:
                print(f"  {n}")
                if n in ran:
                    print(f"      {where(ran[n][1])}")
    if vp:
        print(f"\nvacuous passes ({len(vp)}; they pass with no kubelet behind the node):")
        for n in vp:
            print(f"  {n}")
    return 1 if by['failed'] or by['not run'] else 0


if __name__ == '__main__':
    raise SystemExit(main())
