#!/usr/bin/env python3
"""Functions over 150 lines outside tests, longest first. usage: run in the
repository root: scripts/long-functions.py"""
import re, os, sys
rows = []
for dp, dn, fn in os.walk("src"):
    for f in fn:
        if not f.endswith('.rs'): continue
        p = os.path.join(dp, f)
        lines = open(p).read().split('\n')
        in_tests = False
        for i, l in enumerate(lines):
            if l.startswith('#[cfg(test)]'): in_tests = True
            m = re.match(r'^(\s*)(pub(\([a-z]+\))? )?(async )?fn (\w+)', l)
            if m and not in_tests:
                indent = m.group(1)
                # find end: first line == indent + '}'
                for j in range(i+1, len(lines)):
                    if lines[j] == indent + '}':
                        n = j - i + 1
                        if n > 150: print(f"{n:5} {p}:{i+1} {m.group(5)}")
                        break
