#!/usr/bin/env python3
"""Compare the RIHS01 type hashes of built interface packages with TYPE_HASHES.txt.

Usage: check_type_hashes.py PREFIX [PREFIX ...]
PREFIX is an install prefix (merged or a colcon isolated package prefix). The script reads
share/<pkg>/{msg,srv,action}/*.json (written by rosidl_generator_type_description) and exits 1
on any mismatch or on a listed type that no prefix provides.
"""
import glob
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
expected = {}
with open(os.path.join(here, 'TYPE_HASHES.txt')) as f:
    for line in f:
        if line.startswith('#') or not line.strip():
            continue
        name, digest, _ = line.split()
        expected[name] = digest

found = {}
for prefix in sys.argv[1:]:
    for path in glob.glob(os.path.join(prefix, '**', 'share', '*', '*', '*.json'), recursive=True) + \
            glob.glob(os.path.join(prefix, 'share', '*', '*', '*.json')):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if 'type_hashes' not in data:
            continue
        top = data['type_description_msg']['type_description']['type_name']
        for entry in data['type_hashes']:
            if entry['type_name'] == top:
                found[top] = entry['hash_string']

bad = 0
for name, digest in sorted(expected.items()):
    got = found.get(name)
    if got != digest:
        bad += 1
        print(f'MISMATCH {name}: expected {digest}, built {got}')
print(f'{len(expected) - bad} of {len(expected)} type hashes match')
sys.exit(1 if bad else 0)
