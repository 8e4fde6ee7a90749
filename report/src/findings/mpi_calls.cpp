#include "mpi_calls.hpp"

#include <algorithm>
#include <cctype>

#include "directive.hpp"

namespace scalea::cli {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where `name` is called on `text` (lower case): the position of its opening parenthesis, or npos.
size_t call_paren(const std::string& text, const std::string& name) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    if (at > 0 && ident_char(text[at - 1])) continue;
    size_t p = at + name.size();
    if (p < text.size() && ident_char(text[p])) continue;
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t')) ++p;
    if (p < text.size() && text[p] == '(') return p;
  }
  return std::string::npos;
}

// The arguments of the call whose opening parenthesis is at `open` of lines[first] (0-based),
// reading on to its closing parenthesis; false when that is not found within kCallLines lines.
// Fortran: `!` starts a comment, and `&` at a line's end continues it.
bool split_arguments(const std::vector<std::string>& lines, size_t first, size_t open, bool fortran,
                     std::vector<std::string>& args) {
  int depth = 0;
  bool in_block_comment = false;
  char quote = 0;
  std::string arg;
  for (size_t l = first; l < lines.size() && l < first + kCallLines; ++l) {
    const std::string& s = lines[l];
    for (size_t i = l == first ? open : 0; i < s.size(); ++i) {
      const char c = s[i];
      if (in_block_comment) {
        if (c == '*' && i + 1 < s.size() && s[i + 1] == '/') in_block_comment = false, ++i;
        continue;
      }
      if (quote) {
        arg += c;
        if (c == '\\' && i + 1 < s.size()) arg += s[++i];
        else if (c == quote) quote = 0;
        continue;
      }
      if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
        in_block_comment = true, ++i;
        continue;
      }
      if (fortran ? c == '!' : c == '/' && i + 1 < s.size() && s[i + 1] == '/') break;
      if (fortran && c == '&') continue;  // a continuation, at the end of a line or the start
      if (c == ' ' || c == '\t') continue;
      if (c == '"' || c == '\'') quote = c;
      if (c == '(' || c == '[' || c == '{') {
        if (depth++ == 0) continue;  // the call's own parenthesis
      } else if (c == ')' || c == ']' || c == '}') {
        if (--depth == 0) {
          if (!arg.empty() || !args.empty()) args.push_back(arg);
          return true;
        }
        if (depth < 0) return false;
      } else if (c == ',' && depth == 1) {
        args.push_back(arg);
        arg.clear();
        continue;
      }
      arg += c;
    }
  }
  return false;
}

}  // namespace

MpiCall mpi_call_in(const std::vector<std::string>& lines, uint32_t line,
                    const std::string& function) {
  MpiCall call;
  if (line == 0 || lines.size() < line || function.empty()) return call;
  const std::string name = lower(function);
  for (uint32_t at = line; at >= 1 && at + kDirectiveLinesAbove >= line; --at) {
    const std::string text = lower(lines[at - 1]);
    const size_t open = call_paren(text, name);
    if (open == std::string::npos) continue;
    // Fortran calls a subroutine with `call`: the line's text before the name ends with it.
    const std::string before = text.substr(0, text.rfind(name, open));
    const size_t end = before.find_last_not_of(" \t");
    const bool fortran =
        end != std::string::npos && end >= 3 && before.compare(end - 3, 4, "call") == 0;
    if (!split_arguments(lines, at - 1, open, fortran, call.args)) return MpiCall{};
    call.found = true;
    call.line = at;
    return call;
  }
  return call;
}

MpiCall mpi_call_at(const std::string& file, uint32_t line, const std::string& function) {
  return mpi_call_in(read_source_lines(file, line + kCallLines), line, function);
}

std::vector<CallKey> fusion_key(const std::string& function) {
  const std::string f = lower(function);
  // MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm)
  if (f == "mpi_allreduce") return {{3, "datatype"}, {4, "operation"}, {5, "communicator"}};
  // MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm)
  if (f == "mpi_reduce")
    return {{3, "datatype"}, {4, "operation"}, {5, "root"}, {6, "communicator"}};
  // MPI_Bcast(buffer, count, datatype, root, comm)
  if (f == "mpi_bcast") return {{2, "datatype"}, {3, "root"}, {4, "communicator"}};
  return {};
}

size_t P2pRoles::args_needed() const {
  return size_t(std::max({send_buf, dest, recv_buf, source}) + 1);
}

P2pRoles p2p_roles(const std::string& function) {
  const std::string f = lower(function);
  // MPI_Send(buf, count, datatype, dest, tag, comm) and its modes
  if (f == "mpi_send" || f == "mpi_ssend" || f == "mpi_rsend" || f == "mpi_bsend")
    return {0, 3, -1, -1};
  // MPI_Recv(buf, count, datatype, source, tag, comm, status)
  if (f == "mpi_recv") return {-1, -1, 0, 3};
  // MPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag,
  //              recvbuf, recvcount, recvtype, source, recvtag, comm, status)
  if (f == "mpi_sendrecv") return {0, 3, 5, 8};
  // MPI_Sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status)
  if (f == "mpi_sendrecv_replace") return {0, 3, 0, 5};
  return {};
}

}  // namespace scalea::cli
