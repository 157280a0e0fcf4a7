// The rows a grid fit hands to the exact engine (grid_local_fit, GridCv): local_fit on a subset of the queries.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"

namespace ka {

// Runs local_fit on a subset of the queries (`rows`, `count` of them), writing row r's outputs into entry r of
// `into` (count rows; any pointer but mean.data may be null). With leave-one-out, each row runs alone with its own
// key masked by key padding.
Result fit_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& into);

// fit_rows, with each row's outputs written in its own place in `out`.
Result exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out);

}  // namespace ka
