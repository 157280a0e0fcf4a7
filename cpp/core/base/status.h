// Result codes of the core: no exceptions cross its API; every entry point returns a Status.
#pragma once
#include <cstdint>

namespace ka {

enum class Status : int32_t {
  Ok = 0,
  BadArgument,  // an option out of range (unknown kernel, heads not dividing dim, ...)
  BadShape,     // sizes that do not fit together
  EmptyRow,     // a query had no admissible key and the policy is EmptyPolicy::Error
  OutOfMemory,  // a scratch allocation failed
  Cancelled,    // a progress hook asked a long call to stop (bandwidth.h's SearchProgress)
};

// Outcome of a call: the status and, for EmptyRow, the first query (and head) that had no admissible key.
struct Result {
  Status status = Status::Ok;
  int64_t row = -1;
  int32_t head = -1;
};

inline const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "Ok";
    case Status::BadArgument: return "BadArgument";
    case Status::BadShape: return "BadShape";
    case Status::EmptyRow: return "EmptyRow";
    case Status::OutOfMemory: return "OutOfMemory";
    case Status::Cancelled: return "Cancelled";
  }
  return "Unknown";
}

}  // namespace ka
