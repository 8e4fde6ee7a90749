// The two region keys (region_key.hpp): which fields make each, the bytes of the source key's
// text (stored, hashed, in experiment databases) and that no choice of names makes two keys one.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "scalea/drg/experiment.hpp"
#include "scalea/drg/region_key.hpp"

namespace scalea::drg {
namespace {

using K = RegionKind;

Region parallel_at(const std::string& module, const std::string& file, uint32_t line) {
  Region r;
  r.kind = K::Parallel;
  r.module = module;
  r.file = file;
  r.line = line;
  r.function = "main";
  r.address = 0x10;
  return r;
}

// One source position is one region whatever address was recorded, and whichever directory the
// program was built in; without one, the resolved code (else the recorded address).
TEST(RegionKey, SourceKeyIsThePlaceNotTheRecordedAddress) {
  Region a = parallel_at("/build/a/md", "/build/a/md.c", 88);
  Region b = parallel_at("/build/b/md", "/build/b/md.c", 88);
  b.address = 0x20;
  EXPECT_EQ(region_key(a), region_key(b));
  EXPECT_EQ(source_key(a, Paths::Base), source_key(b, Paths::Base));
  EXPECT_NE(source_key(a, Paths::Full), source_key(b, Paths::Full));
  EXPECT_NE(exact_key(a), exact_key(b));
  b.function = "solve";  // one line in two functions (a macro): two constructs
  EXPECT_NE(region_key(a), region_key(b));

  a.file = b.file = "";
  a.line = b.line = 0;
  a.code = b.code = 0x30;
  EXPECT_EQ(region_key(a), region_key(b));
  b.code = 0x40;
  EXPECT_NE(region_key(a), region_key(b));
  b.code = 0;  // unresolved: the recorded address stands for the code
  b.address = 0x30;
  EXPECT_EQ(region_key(a), region_key(b));
}

// The bytes of keys without separators in their fields: those the database holds (docs/
// database.md), which must not change.
TEST(RegionKey, TextOfPlainKeysIsTheStoredForm) {
  Region p;
  p.kind = K::Program;
  p.name = "md";
  EXPECT_EQ(region_key(p), "0:0:md");
  Region loop = parallel_at("/opt/app/md", "/src/md.c", 90);
  loop.kind = K::Loop;
  loop.subkind = 2;
  loop.function = "ns::solve";  // the function is last: its ':' need no escape
  EXPECT_EQ(region_key(loop), "4:2:@md.c:90:ns::solve");
  Region code = parallel_at("/opt/app/libstdc++.so.6", "", 0);
  code.code = 4660;
  EXPECT_EQ(region_key(code), "3:0:@libstdc++.so.6+4660");
  Region user;
  user.kind = K::User;
  user.name = "phase: 1/2";
  EXPECT_EQ(region_key(user), "2:0:phase: 1/2");
}

// Names, files and modules holding the separators: every such key is its own, and the text
// escapes exactly those characters.
TEST(RegionKey, SeparatorsInFieldsNeverMakeTwoKeysOne) {
  const std::vector<std::string> names = {"", "a", "a@b.c:3:f", "a@b.c", "a\\", "a\\@", "@", "\\"};
  const std::vector<std::string> paths = {"", "b.c", "b.c:3:f", "b.c:3", "x+1", "x:1", "\\", ":"};
  const std::vector<std::string> functions = {"", "f", "f+1", "3:f", "f@g"};
  std::set<SourceKey> keys;
  std::set<std::string> texts;
  for (const std::string& name : names)
    for (const std::string& path : paths)
      for (uint32_t line : {0u, 3u})
        for (const std::string& function : functions)
          for (bool source : {true, false}) {
            Region r;
            r.kind = K::User;
            r.name = name;
            r.line = line;
            r.function = function;
            (source ? r.file : r.module) = path;
            r.address = line;
            SourceKey k = source_key(r, Paths::Full);
            if (keys.insert(k).second) texts.insert(k.text());
          }
  EXPECT_EQ(texts.size(), keys.size());

  Region r;
  r.kind = K::User;
  r.name = "a@b\\c";
  r.file = "x:y\\z";
  r.line = 7;
  r.function = "f@:";
  EXPECT_EQ(region_key(r), "2:0:a\\@b\\\\c@x\\:y\\\\z:7:f@:");
}

}  // namespace
}  // namespace scalea::drg
