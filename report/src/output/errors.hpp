// The error every command reports the same way: what the user can act on, in one line.
#pragma once
#include <stdexcept>

namespace scalea::cli {

// A failure the user can act on: printed as "scalea <cmd>: <message>", exit status 2.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace scalea::cli
