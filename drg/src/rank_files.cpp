#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <optional>
#include <string_view>
#include <utility>

#include "file_access.hpp"
#include "layout.hpp"
#include "rank_file_parser.hpp"
#include "read_ahead.hpp"
#include "scalea/drg/cct.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/drg/flat_map.hpp"
#include "settlement.hpp"
#include "team_steps.hpp"

namespace scalea::drg {

namespace fmt = scalea::format;

namespace {

ThreadTree header_of(const ThreadTree& t) {
  ThreadTree h;
  h.rank = t.rank;
  h.thread = t.thread;
  h.flags = t.flags;
  h.os_tid = t.os_tid;
  return h;
}

}  // namespace

struct RankFiles::Impl {
  LoadOptions options;
  FileAccess access;
  const Team* team = nullptr;  // set when the team's processes opened the files together
  std::vector<Piece> pieces;
  std::pair<size_t, size_t> block;    // the files this process opened
  std::vector<uint64_t> costs;        // per file: its bytes (cost_block), all 0 when not known
  std::vector<size_t> thread_counts;  // per file
  FileDefinitions shared;
  Experiment parsed;   // the definitions every file is parsed against: the regions before settling
  Experiment settled;  // the definitions after settling, no threads
  Settlement settlement;
  LoadOptions reread;        // `options` for the files once checked
  std::vector<char> buffer;  // opening's: a file's bytes are not cleared for each read
  Mapping map;               // or the file's pages, mapped

  // Under a team, this process's files as its opening parsed them, as far as the trees may still
  // keep them (MergedTree::keep_budget()): the settling's observing steps copy them, and the first
  // read of each (the tree's) takes them, instead of parsing the file again.
  mutable std::vector<std::vector<ThreadTree>> opened;

  // File i's threads as parsed (their `columns`), then rewritten by `s`; `take`: the opening's
  // copy is handed over rather than copied.
  std::vector<ThreadTree> read(size_t i, const Settlement& s, bool take,
                               const MetricSet& columns) const {
    std::vector<ThreadTree> threads;
    if (i < opened.size() && !opened[i].empty()) {
      threads = take ? std::exchange(opened[i], {}) : opened[i];
    } else {  // this call's own buffer or mapping: readers call it at once (read_ahead)
      std::vector<char> own_buffer;
      Mapping own_map;
      Experiment p = definitions_of(parsed);
      std::string_view bytes = piece_bytes(access, pieces[i], false, own_buffer, own_map);
      parse_rank_bytes(pieces[i].name, bytes, p, reread, shared.present ? &shared : nullptr,
                       columns);
      threads = std::move(p.threads);
    }
    FlatMap64 scratch;
    for (ThreadTree& t : threads) s.apply(t, scratch);
    return threads;
  }

  unsigned readers() const { return detail::read_ahead_threads(options.threads); }

  // Whether threads read with MetricSet::none() came with their values (older versions than 3).
  bool whole(const std::vector<ThreadTree>& threads) const {
    for (const ThreadTree& t : threads)
      if (t.values.size() != t.size() * parsed.metric_count()) return false;
    return true;
  }

  // Each piece's bytes, for blocks of about equal cost: a container's index has them; files of
  // their own on disk are asked their size (stat), up to kCostedFiles of them (a million rank files
  // would cost each process a million stat calls: beyond that, all 0, blocks by count).
  static constexpr size_t kCostedFiles = 65536;
  std::vector<uint64_t> piece_costs() const {
    std::vector<uint64_t> c(pieces.size(), 0);
    const bool ask = access.on_disk && access.size && pieces.size() <= kCostedFiles;
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].in_container) c[i] = pieces[i].in_container->length;
      else if (ask) c[i] = access.size(pieces[i].path);
    }
    if (std::find(c.begin(), c.end(), 0) != c.end()) c.assign(c.size(), 0);  // unsure: by count
    return c;
  }

  // Every file once, in order, as load_experiment reads them serially: the regions of files
  // with definitions of their own are unified in that order. Returns every thread's identity.
  // Files that hold threads only (shared definitions) are parsed ahead on other threads, each
  // against a copy of the definitions; a file that brings definitions of its own is parsed again
  // in its turn, and so is every file after it. Files of version 3 are read without their values
  // (skipped, not decoded); those of older versions whole, and their threads stay opened while the
  // trees' budget allows (MergedTree::keep_budget()), for the tree's first read to take instead of
  // parsing again.
  std::vector<ThreadTree> open_every_file(int64_t declared_ranks) {
    block = {0, pieces.size()};
    RankCheck check(declared_ranks);
    std::vector<ThreadTree> headers;  // every thread without its nodes
    opened.assign(pieces.size(), {});
    const size_t budget = MergedTree::keep_budget();
    size_t room = budget - std::min(budget, MergedTree::kept());
    auto add = [&](size_t i, std::vector<ThreadTree>& threads) {
      check(pieces[i].name, threads, 0);
      thread_counts.push_back(threads.size());
      size_t bytes = 0;
      for (const ThreadTree& t : threads) {
        headers.push_back(header_of(t));
        bytes += MergedTree::bytes_held(t, parsed.metric_count());
      }
      if (shared.present && whole(threads) && bytes <= room)
        room -= bytes, opened[i] = std::move(threads);
    };
    auto parse_in_turn = [&](size_t i) {
      std::string_view b = piece_bytes(access, pieces[i], true, buffer, map);
      parse_rank_bytes(pieces[i].name, b, parsed, options, shared.present ? &shared : nullptr,
                       MetricSet::none());
      add(i, parsed.threads);
      parsed.threads.clear();
    };
    if (!shared.present) {
      for (size_t i = 0; i < pieces.size(); ++i) parse_in_turn(i);
      return headers;
    }
    struct Parsed {
      std::optional<Experiment> file;
      std::exception_ptr error;
    };
    const Experiment before = definitions_of(parsed);
    bool moved = false;  // a file brought definitions: the rest are parsed in their turn
    detail::read_ahead<Parsed>(
        0, pieces.size(), readers(),
        [&](size_t i) {
          Parsed out;
          try {
            Experiment p = definitions_of(before);
            std::vector<char> own_buffer;
            Mapping own_map;
            std::string_view b = piece_bytes(access, pieces[i], true, own_buffer, own_map);
            parse_rank_bytes(pieces[i].name, b, p, options, &shared, MetricSet::none());
            out.file = std::move(p);
          } catch (...) {
            out.error = std::current_exception();
          }
          return out;
        },
        [&](size_t i, Parsed& ahead) {
          if (!moved && ahead.error) std::rethrow_exception(ahead.error);
          if (!moved && (ahead.file->regions.size() != parsed.regions.size() ||
                         ahead.file->metrics != parsed.metrics))
            moved = true;
          if (moved) return parse_in_turn(i);
          add(i, ahead.file->threads);
        });
    return headers;
  }

  // This process's block of files: each file's threads' identities, or the first failure, or
  // that a file has definitions of its own.
  std::vector<char> open_block() {
    ByteWriter out;
    opened.assign(pieces.size(), {});
    const size_t budget = MergedTree::keep_budget();
    size_t room = budget - std::min(budget, MergedTree::kept());
    for (size_t i = block.first; i < block.second; ++i) {
      Experiment p = definitions_of(parsed);
      try {
        std::string_view b = piece_bytes(access, pieces[i], true, buffer, map);
        parse_rank_bytes(pieces[i].name, b, p, options, &shared, MetricSet::none());
      } catch (const LoadError& e) {
        out.put(kFailedFile);
        put_string(out, e.what());
        break;
      }
      if (p.regions.size() != parsed.regions.size() || p.metrics != parsed.metrics) {
        out.put(kOwnDefinitions);
        break;
      }
      out.put(kParsedFile);
      put_headers(out, p.threads);
      size_t bytes = 0;
      for (const ThreadTree& t : p.threads) bytes += MergedTree::bytes_held(t, p.metric_count());
      if (whole(p.threads) && bytes <= room) room -= bytes, opened[i] = std::move(p.threads);
    }
    return std::move(out.bytes());
  }

  // The files opened together, each process its block (file_block), when every file holds
  // threads only; returns false on every process when one has definitions of its own. Throws
  // the first failure in file order on every process.
  bool open_together(int64_t declared_ranks, std::vector<ThreadTree>& headers) {
    block = cost_block(costs, team->rank, team->size);
    std::vector<char> all = team->step(open_block(), [&](std::vector<std::vector<char>>& parts) {
      return combine_openings(parts, pieces, declared_ranks);
    });
    ByteReader in(all);
    const auto opened = in.get<Opened>();
    if (opened == kFailedFile) throw LoadError(get_string(in));
    if (opened == kOwnDefinitions) return false;
    for (size_t i = 0; i < pieces.size(); ++i) {
      std::vector<ThreadTree> threads = get_headers(in);
      thread_counts.push_back(threads.size());
      for (ThreadTree& t : threads) headers.push_back(std::move(t));
    }
    return true;
  }

  void open(const std::string& dir) {
    std::vector<char>& bytes = buffer;
    Listing listing =
        list_files(dir, parsed, options, [&](const std::string& path) -> const std::vector<char>& {
          access.whole(path, bytes);
          return bytes;
        });
    pieces = data_pieces(access, dir, dir + "/" + fmt::kMetaFile, parsed.meta, listing.names);
    shared = std::move(listing.shared);
    if (team && (team->size <= 1 || !shared.present)) team = nullptr;
    costs = piece_costs();
    std::vector<ThreadTree> headers;
    if (team && !open_together(listing.declared_ranks, headers)) team = nullptr, opened = {};
    if (!team) headers = open_every_file(listing.declared_ranks);
    if (headers.empty()) throw LoadError(dir + ": the experiment holds no threads");
    reread = options;
    reread.verify_checksums = false;
    settled = parsed;
    // A step that observes the threads reads the files again, rewritten by the steps before it;
    // a step that rewrites them is recorded in the settlement and done when a file is read.
    auto files = [&](size_t first, size_t last) -> ThreadVisitor {
      return [this, first, last](const std::function<void(ThreadTree&)>& f) {
        const Settlement before = settlement;
        detail::read_ahead<std::vector<ThreadTree>>(
            first, last, readers(),
            [&](size_t i) { return read(i, before, false, MetricSet::none()); },
            [&](size_t, std::vector<ThreadTree>& threads) {
              for (ThreadTree& t : threads) f(t);
            });
      };
    };
    Observers observers{files(block.first, block.second), nullptr, nullptr};
    if (team) {
      observers.combine = [this](std::vector<uint32_t>& notes) {
        exchange(*team, notes, combine_notes);
      };
      observers.combine_firsts = [this](std::vector<uint64_t>& firsts) {
        exchange(*team, firsts, combine_firsts);
      };
    }
    auto recorded = [](const std::function<void(ThreadTree&)>&) {};
    settle_regions(settled, options, settlement, observers, recorded);
    settled.threads = std::move(headers);
  }
};

RankFiles::RankFiles(const std::string& dir, const LoadOptions& options, const Team* team)
    : impl_(std::make_unique<Impl>()) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0)
    throw LoadError(dir + ": no such experiment (" + std::strerror(errno) + ")");
  if (!S_ISDIR(st.st_mode)) throw LoadError(dir + ": not an experiment directory");
  impl_->options = options;
  impl_->access = FileAccess{read_file_into, read_part_into, file_size, directory_names, true};
  impl_->team = team;
  impl_->open(dir);
}

RankFiles::RankFiles(const std::string& dir, const LoadOptions& options, const FileReader& read,
                     const Team* team)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->access = reader_access(read);
  impl_->team = team;
  impl_->open(dir);
}

RankFiles::~RankFiles() = default;
RankFiles::RankFiles(RankFiles&&) noexcept = default;

const Experiment& RankFiles::definitions() const { return impl_->settled; }
size_t RankFiles::files() const { return impl_->pieces.size(); }
std::vector<ThreadTree> RankFiles::threads(size_t i, const MetricSet& columns) const {
  return impl_->read(i, impl_->settlement, true, columns);
}
size_t RankFiles::threads_in(size_t i) const { return impl_->thread_counts[i]; }
unsigned RankFiles::readers() const { return impl_->readers(); }
const Team* RankFiles::team() const { return impl_->team; }
std::pair<size_t, size_t> RankFiles::block() const { return impl_->block; }
std::pair<size_t, size_t> RankFiles::block_of(int rank, int size) const {
  return cost_block(impl_->costs, rank, size);
}

}  // namespace scalea::drg
