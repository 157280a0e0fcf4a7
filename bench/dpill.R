# Times KernSmooth's dpill() for bench/plugin.mjs: Rscript bench/dpill.R <x.f64> <y.f64> <n> <repeats>
# reads n float64 values of x and of y (little-endian), runs dpill(x, y) `repeats` times and prints one line of JSON:
# {"h": …, "seconds": [elapsed seconds of each call], "R": version, "KernSmooth": version}.
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[3])
x <- readBin(args[1], "double", n, size = 8, endian = "little")
y <- readBin(args[2], "double", n, size = 8, endian = "little")
suppressPackageStartupMessages(library(KernSmooth))
h <- NA
seconds <- vapply(seq_len(as.integer(args[4])), function(i) {
  start <- proc.time()[["elapsed"]]
  h <<- dpill(x, y)
  proc.time()[["elapsed"]] - start
}, 0)
cat(sprintf('{"h": %.17g, "seconds": [%s], "R": "%s", "KernSmooth": "%s"}\n', h,
            paste(sprintf("%.6f", seconds), collapse = ", "), R.version.string, packageVersion("KernSmooth")))
