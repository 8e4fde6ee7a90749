// Documents written an element at a time (report/src/output/json_stream.hpp, dump_streamed): the same text as
// nlohmann::json::dump(2) of the whole document, with arrays nested in the streamed elements
// (a region's list of its threads) and empty ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "output/json_stream.hpp"

namespace scalea::cli {
namespace {

using nlohmann::json;

// The region elements of the document below, without their "threads" lists.
const std::vector<json> kRegions = {{{"id", 0}, {"path", "prog"}, {"time", 1.5}},
                                    {{"id", 1}, {"path", "prog/loop"}, {"time", 0.25}},
                                    {{"id", 2}, {"path", "prog/none"}, {"time", 0.0}}};
// Per region, its threads (none for the last).
const std::vector<std::vector<json>> kThreads = {
    {{{"rank", 0}, {"thread", 0}}, {{"rank", 0}, {"thread", 1}}}, {{{"rank", 1}, {"thread", 0}}}, {}};

json whole_document() {
  json doc = {{"schema", "test/1"}, {"empty", json::array()}, {"tail", {1, 2}}};
  doc["regions"] = json::array();
  for (size_t i = 0; i < kRegions.size(); ++i) {
    json r = kRegions[i];
    r["threads"] = kThreads[i];
    doc["regions"].push_back(r);
  }
  return doc;
}

TEST(DumpStreamed, NestedArraysAreWrittenAsDumpWritesTheWholeDocument) {
  auto regions = [](const Emit<json>& emit) {
    for (size_t i = 0; i < kRegions.size(); ++i) {
      auto threads = [i](const Emit<json>& emit_thread) {
        for (const json& t : kThreads[i]) emit_thread(t);
      };
      emit(kRegions[i], {{"threads", threads}});
    }
  };
  auto none = [](const Emit<json>&) {};
  std::string text;
  dump_streamed<json>(append_to(text), {{"schema", "test/1"}, {"tail", {1, 2}}},
                      {{"regions", regions}, {"empty", none}});
  EXPECT_EQ(text, whole_document().dump(2));
}

}  // namespace
}  // namespace scalea::cli
