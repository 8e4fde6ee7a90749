// A run that ended without writing its experiment (SIGKILL, the kernel's OOM killer): its last
// snapshot kept as an incomplete experiment, so that what was measured until then is not lost.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "online.hpp"
#include "scalea/format.hpp"

namespace scalea::cli::online {

namespace {

bool write_file(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, std::streamsize(size));
  out.close();
  return bool(out);
}

// The files of one point: meta.json and the ranks' data files, in a hidden directory beside
// `dir`, then renamed to `dir` (never over an existing one), then the live snapshots moved in as
// DIR/snapshots (as the tool moves them when it writes the experiment).
std::string publish(const std::string& dir, const drg::SnapshotFiles& f) {
  size_t slash = dir.rfind('/');
  std::string parent = slash == std::string::npos ? "." : dir.substr(0, slash + 1);
  std::string base = dir.substr(slash == std::string::npos ? 0 : slash + 1);
  std::string tmp =
      (slash == std::string::npos ? "" : parent) + "." + base + ".kept-" + std::to_string(getpid());
  if (mkdir(tmp.c_str(), 0777) != 0) return tmp + ": " + std::strerror(errno);
  std::string meta = f.meta.dump(2) + "\n";
  bool ok = write_file(tmp + "/" + format::kMetaFile, meta.data(), meta.size());
  for (const auto& [name, bytes] : f.files)
    ok = ok && write_file(tmp + "/" + name, bytes->data(), bytes->size());
  if (ok && renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0) {
    rename((dir + ".live").c_str(), (dir + "/snapshots").c_str());
    return "";
  }
  std::string why = ok ? dir + ": " + std::strerror(errno) : tmp + ": cannot write its files";
  for (const auto& [name, bytes] : f.files) unlink((tmp + "/" + name).c_str());
  unlink((tmp + "/" + format::kMetaFile).c_str());
  rmdir(tmp.c_str());
  return why;
}

}  // namespace

KeptSnapshot keep_last_snapshot(const std::string& experiment, const std::string& ended) {
  KeptSnapshot k;
  k.dir = experiment;
  while (k.dir.size() > 1 && k.dir.back() == '/') k.dir.pop_back();
  std::optional<drg::SnapshotDir> s = drg::find_snapshots(k.dir);
  if (!s || !s->live) return k;
  std::vector<Point> points = complete_points(*s);
  // The newest point whose files all read; a damaged one (the disk) gives way to the one before.
  for (auto p = points.rbegin(); p != points.rend(); ++p) {
    std::vector<drg::SnapshotPart> parts;
    try {
      for (const auto& [rank, path] : p->files) parts.push_back(drg::read_snapshot(path));
    } catch (const drg::LoadError&) {
      continue;
    }
    drg::SnapshotFiles f = drg::snapshot_files(parts, k.dir);
    for (const drg::SnapshotPart& part : parts) k.at_s = std::max(k.at_s, part.time_s());
    f.meta["complete"] = false;
    f.meta["finished_by"] = "snapshot";
    if (!f.meta["notes"].is_array()) f.meta["notes"] = nlohmann::json::array();
    f.meta["notes"].push_back(fmt::format(
        "{} before it wrote its experiment: this is its last snapshot, {:.2f} s into the run "
        "(kept by scalea run); what ran after it is missing",
        ended, k.at_s));
    k.error = publish(k.dir, f);
    k.kept = k.error.empty();
    return k;
  }
  return k;
}

}  // namespace scalea::cli::online
