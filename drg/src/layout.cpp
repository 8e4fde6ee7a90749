#include "layout.hpp"

#include <algorithm>
#include <optional>

#include "container.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

namespace {

// The rank files of the container `path`, from its index.
void add_container_pieces(const FileAccess& access, const std::string& path,
                          std::vector<Piece>& pieces) {
  const uint64_t size = access.size(path);
  std::vector<char> head;
  access.part(path, 0, sizeof(fmt::ContainerHeader), head);
  access.part(path, 0, container_head_size(path, head), head);
  for (const fmt::ContainerEntry& e : read_container_index(path, head, size))
    pieces.push_back(Piece{path + " [rank " + std::to_string(e.rank) + "]", path, e});
}

// "rank-000001.sdrg" beside "node-000000.sdrc": the one layout must be the experiment's only.
void check_one_layout(const FileAccess& access, const std::string& dir,
                      const std::string& meta_path, const std::vector<std::string>& names) {
  size_t containers = size_t(std::count_if(names.begin(), names.end(), is_container_name));
  if (containers == 0 && !access.list) return;
  if (containers > 0 && containers < names.size())
    throw LoadError(meta_path +
                    ": mixed layouts: lists rank files and containers (docs/experiment-format.md)");
  if (!access.list) return;
  for (const std::string& n : access.list(dir)) {
    bool rank_file =
        n.rfind("rank-", 0) == 0 && n.size() > 5 && n.compare(n.size() - 5, 5, ".sdrg") == 0;
    if (containers > 0 ? rank_file : is_container_name(n))
      throw LoadError(dir + ": mixed layouts: holds " + n + " beside the " +
                      (containers > 0 ? "containers" : "rank files") + " meta.json lists");
  }
}

// A rank the run wrote (meta.json mpi.ranks_written) that no container holds: a container lost it.
void check_ranks_written(const std::string& dir, const nlohmann::json& meta,
                         const std::vector<Piece>& pieces) {
  auto mpi = meta.find("mpi");
  if (mpi == meta.end() || !mpi->is_object() || !mpi->contains("ranks_written") ||
      !(*mpi)["ranks_written"].is_array())
    return;
  std::unordered_set<int64_t> held;
  for (const Piece& p : pieces) held.insert(p.in_container->rank);
  std::string lost;
  size_t count = 0;
  for (const auto& r : (*mpi)["ranks_written"])
    if (r.is_number_integer() && !held.count(r.get<int64_t>()) && ++count <= 32)
      lost += (lost.empty() ? "" : ", ") + std::to_string(r.get<int64_t>());
  if (count > 32) lost += ", ... (" + std::to_string(count) + " in all)";
  if (count)
    throw LoadError(dir + ": rank(s) " + lost +
                    " written by the run (meta.json mpi.ranks_written) are in no container");
}

}  // namespace

std::vector<Piece> data_pieces(const FileAccess& access, const std::string& dir,
                               const std::string& meta_path, const nlohmann::json& meta,
                               const std::vector<std::string>& names) {
  check_one_layout(access, dir, meta_path, names);
  std::vector<Piece> pieces;
  for (const std::string& name : names) {
    std::string path = dir + "/" + name;
    if (is_container_name(name)) add_container_pieces(access, path, pieces);
    else pieces.push_back(Piece{path, path, std::nullopt});
  }
  if (!names.empty() && is_container_name(names[0])) check_ranks_written(dir, meta, pieces);
  return pieces;
}

Listing list_files(const std::string& dir, Experiment& e, const LoadOptions& options,
                   const std::function<const std::vector<char>&(const std::string&)>& read) {
  Listing out;
  e.path = dir;
  std::string meta_path = dir + "/" + fmt::kMetaFile;
  e.meta = parse_meta(meta_path, read(meta_path));
  out.declared_ranks = e.meta.contains("ranks") ? e.meta["ranks"].get<int64_t>() : -1;
  std::unordered_set<std::string> names;
  if (e.meta.contains("definitions")) {
    std::string name = e.meta["definitions"].get<std::string>();
    std::string path = dir + "/" + name;
    out.shared = parse_rank_file(path, read(path), e, options, nullptr);
    if (!out.shared.present) throw LoadError(path + ": holds no definitions");
    if (!e.threads.empty()) throw LoadError(path + ": a definitions file holds no threads");
    names.insert(name);
  }
  for (const auto& f : e.meta["files"]) {
    std::string name = f.get<std::string>();
    if (!names.insert(name).second) throw LoadError(meta_path + ": file " + name + " listed twice");
    out.names.push_back(name);
  }
  return out;
}

}  // namespace scalea::drg
