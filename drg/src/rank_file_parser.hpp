// Reading one rank file (rank_file_parser.cpp, docs/experiment-format.md): the parser behind
// parse_rank_file, for the loader's readers that hold a file's bytes mapped. Used by the loader
// (drg/src) only.
#pragma once
#include <string>
#include <string_view>

#include "scalea/drg/experiment.hpp"

namespace scalea::drg {

// parse_rank_file (experiment.hpp) over bytes held anywhere (a mapping, a buffer).
FileDefinitions parse_rank_bytes(const std::string& name, std::string_view bytes, Experiment& into,
                                 const LoadOptions& options, const FileDefinitions* shared,
                                 const MetricSet& columns = MetricSet::all());

// An experiment with `e`'s metrics and regions and nothing else: what a rank file is parsed into.
Experiment definitions_of(const Experiment& e);

}  // namespace scalea::drg
