#!/usr/bin/env python3
"""Which top-level module of src/ imports which (crate::x / rpg::x paths,
doc links included). usage: scripts/module-graph.py [SRC_DIR]"""
import os, re, sys, collections
root = sys.argv[1] if len(sys.argv) > 1 else 'src'
top = lambda p: p.split('/')[0].replace('.rs','')
edges = collections.defaultdict(set)
for dp, dn, fn in os.walk(root):
    for f in fn:
        if not f.endswith('.rs'): continue
        path = os.path.relpath(os.path.join(dp, f), root)
        me = top(path)
        if me in ('main','lib'): continue
        text = open(os.path.join(dp, f)).read()
        for m in re.finditer(r'\b(?:crate|rpg)::([a-z_]+)', text):
            t = m.group(1)
            if t != me and os.path.exists(os.path.join(root, t)) or os.path.exists(os.path.join(root, t + '.rs')):
                if t != me: edges[me].add(t)
for k in sorted(edges): print(f"{k:10} -> {', '.join(sorted(edges[k]))}")
