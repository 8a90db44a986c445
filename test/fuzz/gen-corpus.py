#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
#
# Write the seed corpus of fuzz_heap (test/fuzz/corpus/): short call sequences
# in the harness's input format (see the comment at the top of fuzz_heap.c),
# one for each route, edge and kind of bad pointer, and a few random mixes.
# Usage: test/fuzz/gen-corpus.py [DIR]    (default: test/fuzz/corpus beside this script)

import os
import random
import sys

(MALLOC, ZMALLOC, CALLOC, REALLOC, FREE, BULK, FREE_BULK, VALIDATE, BAD, SOCKET, CONTIG,
 TRIM, CHECK, ROUTE) = range(14)

KIB = 1 << 10
MIB = 1 << 20
EDGES = [1, 48, 63, 64, 65, 1072, 1073, 1088, 4095, 4096, 4097, 65535, 65536, 65537,
         262143, 262144, 262145, 2 * MIB - 1, 2 * MIB, 2 * MIB + 1, 4 * MIB]


def size(n):
    """Bytes that make get_size() return n (n below 8 MiB), or a special size."""
    if n == 0:
        return [0]
    if n in EDGES:
        return [5, EDGES.index(n)]
    bits = n.bit_length() - 1
    k = bits if bits >= 6 else bits + 23
    rest = (n - (1 << bits)) & 0xffff
    return [k, rest & 0xff, rest >> 8]


SIZE_MAX = [1]
SIZE_LIMIT_PLUS_1 = [3]


def size_max_minus(k):
    return [2, k]


def tib(shift):
    return [4, shift]


def align(a):
    """Bytes that make get_align() return a."""
    if a == 0:
        return [0x80]
    if a == 'odd':
        return [0xa5]
    if a == 'uint_max':
        return [0xe1]
    if a == 'big+1':
        return [0xe2]
    k = a.bit_length() - 1
    assert a == 1 << k
    if k <= 22:
        return [k]
    if k == 31:
        return [0xe0]
    for b in range(0xc0, 0xe0):
        if b % 9 == k - 23:
            return [b]
    raise ValueError(a)


def malloc(n, a=0):
    return [MALLOC] + size(n) + align(a)


def zmalloc(n, a=0):
    return [ZMALLOC] + size(n) + align(a)


def calloc(num, n, a=0):
    return [CALLOC, num] + size(n) + align(a)


def realloc(target, n, a=0):
    return [REALLOC, target] + size(n) + align(a)


def free(target):
    return [FREE, target]


def bulk(count, n, a=0):
    return [BULK, count] + size(n) + align(a)


def free_bulk(targets):
    return [FREE_BULK, len(targets)] + list(targets)


def bad(kind, action, arg=0):
    return [BAD, kind, action, arg & 0xff, arg >> 8]


ROUTES = [(64, 0), (1000, 0), (200 * KIB, 0), (4 * KIB, 4 * KIB), (12 * KIB, 4 * KIB),
          (64 * KIB, 64 * KIB), (192 * KIB, 64 * KIB), (300 * KIB, 0), (64, 2 * MIB),
          (3 * MIB, 0), (2 * MIB, 2 * MIB), (MIB, 4 * MIB), (64, 8 * MIB)]


def seeds():
    s = {}
    for i, (n, a) in enumerate(ROUTES):
        s['route-%02d' % i] = malloc(n, a) + malloc(n, a) + [VALIDATE, 0] + free(0) + \
            zmalloc(n, a) + [CHECK]
    s['zmalloc-reuse'] = sum((malloc(n, a) + free(0) + zmalloc(n, a) for n, a in ROUTES), [])
    s['calloc'] = calloc(3, 1000) + calloc(0, 64) + calloc(2, 1 << 20) + calloc(10, 4 * KIB,
                                                                                4 * KIB)
    s['calloc-overflow'] = calloc(2, 2 * MIB) + calloc(2, 64) + [CHECK]
    s['realloc-chain'] = malloc(100) + realloc(0, 150 * KIB) + realloc(0, 1536 * KIB) + \
        realloc(0, 7 * MIB // 2) + realloc(0, 40 * KIB) + realloc(0, 64, 64 * KIB) + [CHECK]
    s['realloc-edges'] = malloc(1000) + realloc(255, 64) + realloc(0, 0) + \
        realloc(0, 64, 'odd') + [REALLOC, 0] + SIZE_MAX + align(0) + \
        [REALLOC, 0] + tib(0) + align(0) + realloc(0, 2000, 8 * MIB)
    s['bulk'] = bulk(32, 4 * KIB, 4 * KIB) + bulk(16, 64) + bulk(8, 64 * KIB, 64 * KIB) + \
        free_bulk(range(0, 32, 3)) + free_bulk([128, 1, 2, 130]) + [CHECK]
    s['bulk-edges'] = bulk(0, 64) + bulk(4, 0) + bulk(4, 64, 'odd') + [BULK, 4] + SIZE_MAX + \
        align(0) + bulk(64, 1000) + free_bulk(range(16))
    for kind in range(6):
        for action in range(3):
            s['bad-%d-%d' % (kind, action)] = malloc(100) + malloc(5000, 4 * KIB) + \
                malloc(3 * MIB) + free(1) + bad(kind, action, 7) + bad(kind, action, 300) + \
                [CHECK]
    s['double-free'] = malloc(64) + free(0) + bad(1, 0, 0) + malloc(64) + free(0) + \
        bad(1, 1, 1)
    s['sizes-special'] = [MALLOC] + SIZE_MAX + align(0) + [MALLOC] + size_max_minus(63) + \
        align(0) + [ZMALLOC] + SIZE_LIMIT_PLUS_1 + align(0) + [MALLOC] + tib(0) + align(0) + \
        [MALLOC] + tib(6) + align(4 * KIB) + malloc(0)
    s['aligns-special'] = malloc(64, 'odd') + malloc(64, 'uint_max') + malloc(64, 'big+1') + \
        malloc(64, 1 << 31) + malloc(4096, 1 << 27) + malloc(64, 1) + malloc(64, 2)
    s['sockets'] = [SOCKET, 0] + size(100) + align(0) + [SOCKET, 1] + size(4096) + \
        align(4096) + [SOCKET, 0xff] + size(3 * MIB) + align(0) + [SOCKET, 0x80] + size(0) + \
        align(0)
    s['contig'] = [CONTIG] + size(64 * KIB) + align(0) + [CONTIG] + size(0) + align(0) + \
        [CONTIG] + SIZE_MAX + align(0) + [CONTIG] + size(64) + align('odd')
    s['trim'] = sum((malloc(3 * MIB) for _ in range(4)), []) + free(0) + free(0) + free(0) + \
        [TRIM] + malloc(64) + free(0) + [TRIM, CHECK]
    frag = []
    for i in range(40):
        frag += malloc(48 + 37 * i)
    for i in range(0, 40, 2):
        frag += free(i % 20)
    frag += [CHECK] + malloc(2000) + malloc(100 * KIB)
    s['fragment'] = frag
    # ROUTE r v: r % 8 the route, r // 8 % 4 the call, r // 32 the variant
    for route in range(8):
        for call in range(4):
            s['aim-%d-%d' % (route, call)] = sum(
                ([ROUTE, route + 8 * call + 32 * var, 17 * var + 3] for var in range(8)), []) + \
                [ROUTE, 7 + 32 * 3, 9] + free(0) + [CHECK]
    rnd = random.Random(7)
    for i in range(8):
        s['random-%d' % i] = [rnd.randrange(256) for _ in range(64 + 48 * i)]
    return s


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'corpus')
    os.makedirs(out, exist_ok=True)
    for name, data in sorted(seeds().items()):
        assert all(0 <= b < 256 for b in data), name
        with open(os.path.join(out, name), 'wb') as f:
            f.write(bytes(data))
    print('%d seeds in %s' % (len(seeds()), out))


if __name__ == '__main__':
    main()
