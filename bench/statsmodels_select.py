#!/usr/bin/python3
"""statsmodels contender for the bandwidth-selection rows of `npm run bench` (Debian's python3-statsmodels).

  statsmodels_select.py x.f32 y.f32 n lc|ll
times KernelReg(y, x, 'c', reg_type, bw='cv_ls') (its own CV search) and prints one JSON line:
{"seconds": s, "cpu": the process's CPU seconds (time.process_time: every thread), "bandwidth": h, "cv": its cv_loo
at h, "statsmodels": version}, or {"error": ...}.
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

x_path, y_path, n, reg_type = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
x = np.fromfile(x_path, dtype=np.float32, count=n).astype(np.float64)
y = np.fromfile(y_path, dtype=np.float32, count=n).astype(np.float64)
start, cpu = time.perf_counter(), time.process_time()
model = KernelReg(endog=y, exog=x, var_type="c", reg_type=reg_type, bw="cv_ls")
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
bw = float(model.bw[0])
cv = float(model.cv_loo(model.bw, model.est[reg_type]))
print(json.dumps({"seconds": seconds, "cpu": cpu, "bandwidth": bw, "cv": cv, "statsmodels": statsmodels.__version__}))
