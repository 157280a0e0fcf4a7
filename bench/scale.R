# R's automatic smoothers on the samples of bench/scale.mjs, timed here (R 4.2, KernSmooth):
#   Rscript bench/scale.R locpoly x.f64 y.f64 n 1   dpill (the plug-in bandwidth) + locpoly (local-linear on a grid)
#   Rscript bench/scale.R loess   x.f64 y.f64 n 2   loess(y ~ x1 + x2), its defaults (span 0.75, degree 2)
# Prints the median seconds of up to 5 runs (one run when the first takes more than 2 s) as its last line.
args <- commandArgs(trailingOnly = TRUE)
what <- args[1]
n <- as.integer(args[4])
dim <- as.integer(args[5])
x <- readBin(args[2], "double", n * dim, size = 8, endian = "little")
y <- readBin(args[3], "double", n, size = 8, endian = "little")
run <- switch(what,
  locpoly = function() {
    h <- KernSmooth::dpill(x, y)
    KernSmooth::locpoly(x, y, bandwidth = h)
  },
  loess = {
    d <- data.frame(y = y, x1 = x[seq(1, 2 * n, 2)], x2 = x[seq(2, 2 * n, 2)])
    function() loess(y ~ x1 + x2, data = d)
  }
)
once <- function() unname(system.time(run())["elapsed"])
first <- once()
times <- if (first > 2) first else replicate(5, once())
cat(median(times), "\n")
