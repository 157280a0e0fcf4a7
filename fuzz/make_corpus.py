#!/usr/bin/env python3
"""Writes the committed seed corpora fuzz/corpus/<harness>/ (deterministic: rerun after changing fuzz/decode.h).

Each seed spells out the first fields that fuzz/decode.h reads (range, sizes, heads, kernel, policy, scale or
bandwidths, masks) so that every kernel, policy, mask kind and SIMD/tile edge size starts covered; the rest of
the input is left to decode.h's PRNG. Usage: python3 fuzz/make_corpus.py
"""
import itertools
import pathlib
import random
import shutil
import struct

ROOT = pathlib.Path(__file__).resolve().parent / 'corpus'
EDGES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65]


def u32(value):  # Input::in(lo, hi) reads 4 bytes, big-endian, and takes lo + u32 % (hi - lo + 1)
    return struct.pack('>I', value)


def size(n):  # edge_size: a byte < 128 picks EDGES[byte % 18]
    return bytes([EDGES.index(n)]) if n in EDGES else bytes([200]) + u32(n)


def call(rng, data_range, I, J, heads, M, D, kind, policy, masks, threads=1):
    """The bytes fuzz::Call reads, in order, up to the mask density; sizes valid for the harness."""
    out = bytes([data_range]) + size(I)
    out += bytes([0]) if J == I else bytes([30]) + size(J)  # chance(25): J = I
    out += u32(heads - 1) + u32(M - 1) + u32(D - 1) + bytes([0])  # chance(90): round M and D to heads
    out += u32(threads - 1) + bytes([99])  # threads, and chance(1) of threads = 0 not taken
    out += bytes([kind, 99, policy, 99])  # kind, policy; chance(2) of an invalid value not taken
    if kind == 0:
        out += bytes([rng.randrange(200), rng.randrange(256)])  # scale: byte / 32
    else:
        out += bytes([99])  # one bandwidth per dimension
        for _ in range(M):
            out += bytes([rng.randrange(200), rng.randrange(256)]) + u32(rng.randrange(8, 12))  # 2^0 .. 2^3
    out += bytes([masks, rng.randrange(10, 60)])  # mask bits, density %
    return out + bytes(rng.randrange(256) for _ in range(rng.randrange(0, 48)))


def seeds_for_calls(rng, lead=b'', max_width=6, count=36):
    shapes = [(1, 1, 1, 1, 1), (3, 5, 1, 2, 1), (16, 17, 2, 2, 2), (63, 64, 1, 3, 4), (65, 63, 2, 4, 2),
              (64, 64, 1, 16, 3), (17, 65, 2, 16, 4), (33, 31, 4, 20, 4), (0, 5, 1, 2, 1), (5, 0, 1, 2, 1)]
    out = []
    for n in range(count):
        I, J, heads, M, D = shapes[n % len(shapes)]
        D = min(D, max_width)
        kind, policy = n % 7, (n // 7) % 4
        masks = [0, 1, 2, 4, 8, 16, 5, 24, 31][n % 9]
        if masks & 2:
            J = I  # leave-one-out needs I = J
        data_range = [0, 0, 1, 2][n % 4]
        out.append(lead + call(rng, data_range, I, J, heads, M, D, kind, policy, masks, threads=1 + n % 2))
    return out


def bandwidth_seeds(rng, count=36):
    out = []
    for n in range(count):
        what, data_range = n % 3, [0, 0, 1, 2][n // 3 % 4]
        size_n = [1, 2, 3, 8, 17, 24][n % 6]
        dims, width = 1 + n % 3, 1 + n % 2
        out.append(bytes([what, data_range]) + u32(size_n) + u32(dims - 1) + u32(width - 1) +
                   bytes(rng.randrange(256) for _ in range(rng.randrange(8, 64))))
    return out


def main():
    rng = random.Random(20261202)
    corpora = {
        'attention': seeds_for_calls(rng),
        'weights': seeds_for_calls(rng, max_width=4),
        'states': seeds_for_calls(rng, lead=bytes([0])) + seeds_for_calls(rng, lead=bytes([80]), count=12),
        'bandwidth': bandwidth_seeds(rng),
    }
    for name, seeds in corpora.items():
        folder = ROOT / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for n, seed in enumerate(seeds):
            (folder / f'seed-{n:03d}').write_bytes(seed)
        print(f'{name}: {len(seeds)} seeds')


if __name__ == '__main__':
    main()
