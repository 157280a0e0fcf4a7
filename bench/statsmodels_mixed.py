#!/usr/bin/python3
"""statsmodels contender for the mixed-data selection rows of `node bench/mixed.mjs` (Debian's python3-statsmodels).

  statsmodels_mixed.py x.f64 y.f64 n var_type lc|ll
x holds n rows of len(var_type) values (discrete columns as codes 0 ... c - 1). Times KernelReg(y, x, var_type,
reg_type, bw='cv_ls') (its own search: Nelder-Mead on its leave-one-out CV) and prints one JSON line:
{"seconds": s, "cpu": the process's CPU seconds (time.process_time: every thread), "bandwidth": [...],
"evaluations": its CV evaluations, "statsmodels": version}, or {"error": ...}.
"""
import json
import sys
import time

try:
    import numpy as np
    import statsmodels
    from statsmodels.nonparametric.kernel_regression import KernelReg
except Exception as e:  # noqa: BLE001 - any import failure means "not available"
    print(json.dumps({"error": f"python3 cannot import statsmodels: {e}"}))
    sys.exit(0)

x_path, y_path, n, var_type, reg_type = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
x = np.fromfile(x_path, dtype=np.float64, count=n * len(var_type)).reshape(n, len(var_type))
y = np.fromfile(y_path, dtype=np.float64, count=n)
calls = [0]
cv_loo = KernelReg.cv_loo


def counted(self, bw, func):
    calls[0] += 1
    return cv_loo(self, bw, func)


KernelReg.cv_loo = counted
start, cpu = time.perf_counter(), time.process_time()
model = KernelReg(endog=y, exog=x, var_type=var_type, reg_type=reg_type, bw="cv_ls")
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu": cpu, "bandwidth": [float(v) for v in model.bw], "evaluations": calls[0],
                  "statsmodels": statsmodels.__version__}))
