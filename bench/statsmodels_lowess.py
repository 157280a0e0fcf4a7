#!/usr/bin/python3
"""statsmodels contender for the LOWESS rows of `npm run bench` (Debian's python3-statsmodels).

  statsmodels_lowess.py x.f64 y.f64 n frac iterations delta fitted.f64
times lowess(y, x, frac, it=iterations, delta=delta, return_sorted=False) once, writes its fitted values
(input order, float64) to fitted.f64 and prints one JSON line {"seconds": s, "statsmodels": version},
or {"error": ...}.
"""
import json
import sys
import time

try:
    import numpy as np
    import statsmodels
    from statsmodels.nonparametric.smoothers_lowess import lowess
except Exception as e:  # noqa: BLE001 - any import failure means "not available"
    print(json.dumps({"error": f"python3 cannot import statsmodels: {e}"}))
    sys.exit(0)

x_path, y_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
frac, iterations, delta, out_path = float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
x = np.fromfile(x_path, dtype=np.float64, count=n)
y = np.fromfile(y_path, dtype=np.float64, count=n)
start = time.perf_counter()
fitted = lowess(y, x, frac=frac, it=iterations, delta=delta, return_sorted=False)
seconds = time.perf_counter() - start
np.asarray(fitted, dtype=np.float64).tofile(out_path)
print(json.dumps({"seconds": seconds, "statsmodels": statsmodels.__version__}))
