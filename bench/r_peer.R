# R contender for the benchmarks (bench/peers/r.mjs): R's loess() and lowess() and KernSmooth's locpoly() and dpill(),
# timed inside R with proc.time() (elapsed and this process's CPU seconds).
#
# Speaks the line protocol of bench/peers/child.mjs: one command per line on stdin, one JSON object per line on
# stdout. Inputs are float64 files (little-endian) of n values (x: n × dims, row-major).
#   loess x.f64 y.f64 n dims span degree family surface trace.hat   load, fit once; run refits
#   lowess x.f64 y.f64 n f iter delta                                load, fit once; run refits
#   locpoly x.f64 y.f64 n degree bandwidth gridsize                  load, fit once; run refits
#   dpill x.f64 y.f64 n                                              load, select once; run selects again
#   run            {"seconds": elapsed, "cpu": user + system}
#   save out.f64   the last output (loess, lowess: fitted values in the input order; locpoly: the grid's values;
#                  dpill: the bandwidth)
#   quit
# Announces itself with {"ready": true, "r": version, "kernsmooth": version or null}.

reply <- function(fields) {
  body <- vapply(names(fields), function(k) {
    v <- fields[[k]]
    paste0("\"", k, "\": ", if (is.null(v)) "null" else if (is.character(v)) paste0("\"", v, "\"")
                            else if (is.logical(v)) tolower(as.character(v)) else sprintf("%.9g", v))
  }, "")
  cat("{", paste(body, collapse = ", "), "}\n", sep = "")
  flush(stdout())
}

kernsmooth <- if (requireNamespace("KernSmooth", quietly = TRUE)) as.character(packageVersion("KernSmooth")) else NULL
reply(list(ready = TRUE, r = R.version.string, kernsmooth = kernsmooth))

read_f64 <- function(path, count) readBin(path, "double", n = count, size = 8, endian = "little")

task <- NULL  # a function of no arguments returning the output
output <- NULL

load_task <- function(words) {
  cmd <- words[1]
  n <- as.integer(words[4])
  if (cmd == "loess") {
    dims <- as.integer(words[5])
    data <- as.data.frame(matrix(read_f64(words[2], n * dims), ncol = dims, byrow = TRUE))
    names(data) <- paste0("x", seq_len(dims))
    data$y <- read_f64(words[3], n)
    form <- as.formula(paste("y ~", paste(names(data)[seq_len(dims)], collapse = " + ")))
    span <- as.numeric(words[6]); degree <- as.integer(words[7])
    control <- loess.control(surface = words[9], trace.hat = words[10])
    return(function() fitted(loess(form, data, span = span, degree = degree, family = words[8], control = control)))
  }
  x <- read_f64(words[2], n)
  y <- read_f64(words[3], n)
  if (cmd == "lowess") {
    f <- as.numeric(words[5]); iter <- as.integer(words[6]); delta <- as.numeric(words[7])
    o <- order(x)  # lowess returns its fit in increasing x: back to the input order
    return(function() { r <- numeric(n); r[o] <- lowess(x, y, f = f, iter = iter, delta = delta)$y; r })
  }
  if (is.null(kernsmooth)) stop("KernSmooth is not installed")
  if (cmd == "locpoly") {
    degree <- as.integer(words[5]); h <- as.numeric(words[6]); grid <- as.integer(words[7])
    return(function() KernSmooth::locpoly(x, y, degree = degree, bandwidth = h, gridsize = grid)$y)
  }
  if (cmd == "dpill") return(function() KernSmooth::dpill(x, y))
  stop("unknown command ", cmd)
}

timed <- function() {
  t0 <- proc.time()
  output <<- task()
  t <- proc.time() - t0
  reply(list(seconds = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]]))
}

con <- file("stdin")
open(con)
repeat {
  line <- readLines(con, n = 1)
  if (length(line) == 0) break
  words <- strsplit(trimws(line), "[[:space:]]+")[[1]]
  if (words[1] == "quit") break
  result <- tryCatch({
    if (words[1] == "run") {
      if (is.null(task)) stop("nothing loaded")
      timed()
    } else if (words[1] == "save") {
      writeBin(as.double(output), words[2], size = 8, endian = "little")
      reply(list(saved = length(output)))
    } else {
      task <- load_task(words)
      timed()
    }
    NULL
  }, error = function(e) conditionMessage(e))
  if (!is.null(result)) reply(list(error = gsub("\"", "'", gsub("\n", " ", result))))
}
