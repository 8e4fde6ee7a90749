// The steps of an analysis shared by several processes (share.hpp): what travels and how a
// failure on any process reaches every process.
#include "scalea/overheads/share.hpp"

#include <cstdint>
#include <cstring>

#include "scalea/drg/team.hpp"

namespace scalea::overheads {

namespace {

// Every message starts with a status: 0 for a part or a result, else the exit status of a
// failure, followed by its message.
// `body` is taken and grown in place: a pass's part is hundreds of MB.
std::vector<char> with_status(int32_t status, std::vector<char> body) {
  body.insert(body.begin(), sizeof status, 0);
  std::memcpy(body.data(), &status, sizeof status);
  return body;
}

std::vector<char> text_of(const std::string& text) {
  return std::vector<char>(text.begin(), text.end());
}

int32_t status_of(const std::vector<char>& message) {
  int32_t status = 0;
  if (message.size() >= sizeof status) std::memcpy(&status, message.data(), sizeof status);
  return status;
}

// The message without its status, in place: a pass's parts are hundreds of MB.
std::vector<char> body_of(std::vector<char>& message) {
  if (message.size() <= sizeof(int32_t)) return {};
  message.erase(message.begin(), message.begin() + sizeof(int32_t));
  return std::move(message);
}

// Rank 0: the result of a step, or the failure of the lowest rank that failed.
std::vector<char> root_result(std::vector<std::vector<char>>& gathered, const Combine& combine) {
  for (std::vector<char>& m : gathered)
    if (status_of(m) != 0) return m;
  std::vector<std::vector<char>> parts;
  parts.reserve(gathered.size());
  for (std::vector<char>& m : gathered) parts.push_back(body_of(m));
  gathered.clear();
  try {
    std::vector<char> result = combine(parts);
    return with_status(0, std::move(result));
  } catch (const std::exception& e) {
    return with_status(3, text_of(e.what()));
  }
}

std::vector<char> exchange(Share& share, const std::vector<char>& mine, const Combine& combine) {
  std::vector<std::vector<char>> gathered = share.gather(mine);
  std::vector<char> result;
  if (share.rank() == 0) result = root_result(gathered, combine);
  result = share.broadcast(result);
  if (int32_t status = status_of(result); status != 0) {
    std::vector<char> text = body_of(result);
    throw SharedFailure(status, std::string(text.begin(), text.end()));
  }
  return body_of(result);
}

}  // namespace

std::vector<char> step(Share& share, std::vector<char> mine, const Combine& combine) {
  return exchange(share, with_status(0, std::move(mine)), combine);
}

void fail(Share& share, int status, const std::string& message) {
  exchange(share, with_status(status == 0 ? 1 : status, text_of(message)), nullptr);
  throw SharedFailure(status, message);  // not reached: the step throws every failure
}

void finish(Share& share) {
  step(share, {}, [](std::vector<std::vector<char>>&) { return std::vector<char>(); });
}

drg::Team team_of(Share& share) {
  drg::Team team;
  team.rank = share.rank();
  team.size = share.size();
  team.step = [&share](std::vector<char> mine, const drg::Team::Combine& combine) {
    return step(share, std::move(mine), combine);
  };
  return team;
}

}  // namespace scalea::overheads
