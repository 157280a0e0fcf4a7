#!/usr/bin/python3
"""PyTorch contender for `npm run bench` (Debian's python3-torch, CPU, float32).

Speaks the line protocol of bench/peers/child.mjs: one command per line on stdin, one JSON object per line on stdout.
  threads N                                     torch.set_num_threads(N)
  attention q.f32 k.f32 v.f32 I J M D scale     load; run computes torch.softmax(q @ k.T * scale, -1) @ v
  nw xq.f32 xk.f32 y.f32 I J h                  load; run computes softmax(-0.5 ((xq - xk) / h)^2) @ y in chunks of
                                                queries so that no intermediate exceeds 2^22 floats
  run | save out.f32 | quit
Announces itself with {"ready": true, "torch": version, "blas": path}; prints {"error": ...} and exits if torch cannot be imported.
"""
import json
import os
import sys
import time


def reply(obj):
    print(json.dumps(obj), flush=True)


try:
    import numpy as np
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means "not available"
    reply({"error": f"python3 cannot import torch: {e}"})
    sys.exit(0)

CHUNK_FLOATS = 2 ** 22


def read(path, rows, cols):
    return torch.from_numpy(np.fromfile(path, dtype=np.float32, count=rows * cols).reshape(rows, cols))


def attention(q, k, v, scale):
    return torch.softmax(q @ k.T * scale, dim=-1) @ v


def nadaraya_watson(xq, xk, y, h):
    chunk = max(1, CHUNK_FLOATS // xk.shape[0])
    out = torch.empty(xq.shape[0], 1)
    for start in range(0, xq.shape[0], chunk):
        u = (xq[start:start + chunk] - xk.T) / h
        out[start:start + chunk] = torch.softmax(-0.5 * u * u, dim=-1) @ y
    return out


def main():
    # Debian's torch calls whatever libblas.so.3 points to (the reference BLAS unless e.g. OpenBLAS is installed).
    blas = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    reply({"ready": True, "torch": torch.__version__, "blas": blas})
    compute, out = None, None
    for line in sys.stdin:
        cmd, *args = line.split()
        try:
            if cmd == "threads":
                torch.set_num_threads(int(args[0]))
                reply({"ok": True, "threads": torch.get_num_threads()})
            elif cmd == "attention":
                I, J, M, D = map(int, args[3:7])
                q, k, v = read(args[0], I, M), read(args[1], J, M), read(args[2], J, D)
                scale = float(args[7])
                compute = lambda: attention(q, k, v, scale)  # noqa: E731
                reply({"ok": True})
            elif cmd == "nw":
                I, J, h = int(args[3]), int(args[4]), float(args[5])
                xq, xk, y = read(args[0], I, 1), read(args[1], J, 1), read(args[2], J, 1)
                compute = lambda: nadaraya_watson(xq, xk, y, h)  # noqa: E731
                reply({"ok": True})
            elif cmd == "run":
                with torch.inference_mode():
                    start = time.perf_counter()
                    out = compute()
                    seconds = time.perf_counter() - start
                reply({"seconds": seconds})
            elif cmd == "save":
                out.numpy().astype(np.float32).tofile(args[0])
                reply({"ok": True})
            elif cmd == "quit":
                return
            else:
                reply({"error": f"unknown command {cmd}"})
        except Exception as e:  # noqa: BLE001 - report, keep serving
            reply({"error": f"{type(e).__name__}: {e}"})


main()
