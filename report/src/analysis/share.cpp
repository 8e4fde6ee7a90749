#include "share.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "output/errors.hpp"
#include "output/process.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/launcher.hpp"

namespace scalea::cli {

namespace {

// An error every process of the job meets before MPI is started: rank 0 prints it.
[[noreturn]] void refuse(const std::string& message) {
  if (launcher_rank().value_or(0) != 0) throw ExitStatus{2, ""};
  throw UserError(message);
}

}  // namespace

std::unique_ptr<overheads::Share> analysis_share() {
  if (launcher_size().value_or(1) <= 1) return nullptr;
  using Open = overheads::Share* (*)();
  std::string path = own_library("libscalea-analysis-mpi.so");
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module)
    refuse("the analysis cannot run as an MPI program (" + std::string(dlerror()) +
           "): run it without mpirun");
  auto open = reinterpret_cast<Open>(dlsym(module, "scalea_analysis_share"));
  if (!open) refuse(path + " is not scalea's MPI module (no scalea_analysis_share)");
  return std::unique_ptr<overheads::Share>(open());
}

void refuse_under_launcher(const std::string& what) {
  if (launcher_size().value_or(1) > 1)
    refuse(what + " does not run as an MPI program yet: run it without mpirun");
}

std::pair<int, std::string> describe_error(std::exception_ptr error, const std::string& command) {
  const std::string prefix = command.empty() ? "scalea: " : "scalea " + command + ": ";
  try {
    std::rethrow_exception(error);
  } catch (const UserError& e) {
    return {2, prefix + e.what()};
  } catch (const drg::LoadError& e) {
    return {2, prefix + e.what()};
  } catch (const nlohmann::json::exception& e) {
    // A JSON file (meta.json, study.json, a machine file) with a value of the wrong type.
    return {2, prefix + "malformed input file: " + e.what()};
  } catch (const std::exception& e) {
    return {3, std::string("scalea: internal error: ") + e.what()};
  }
}

void run_shared(overheads::Share* share, const std::string& command,
                const std::function<void()>& body) {
  if (!share) {
    body();
    return;
  }
  try {
    try {
      body();
    } catch (const overheads::SharedFailure&) {
      throw;
    } catch (...) {
      auto [status, line] = describe_error(std::current_exception(), command);
      overheads::fail(*share, status, line);
    }
    overheads::finish(*share);
  } catch (const overheads::SharedFailure& failure) {
    throw ExitStatus{failure.status, share->rank() == 0 ? failure.what() : ""};
  }
}

}  // namespace scalea::cli
