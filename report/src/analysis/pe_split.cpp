#include "pe_split.hpp"

namespace scalea::cli {

bool split_per_pe(overheads::Class c) {
  return c != overheads::Class::AdditionalComputation && c != overheads::Class::Unidentified;
}

PeSplitTable::PeSplitTable(const Analyzed& x) : nodes_(x.tree().nodes().size()) {
  incl_ = x.a.pe_own;
  if (incl_.empty() || nodes_ == 0) return;
  // A node's parent has a smaller index (drg::MergedTree): children are added up first.
  for (size_t first = 0; first < incl_.size(); first += nodes_)
    for (uint32_t n = uint32_t(nodes_); n-- > 1;) {
      const overheads::PeOwn& child = incl_[first + n];
      overheads::PeOwn& parent = incl_[first + x.tree().node(n).parent];
      parent.useful += child.useful;
      for (int c = 0; c < overheads::kClassCount; ++c)
        parent.classes[size_t(c)] += child.classes[size_t(c)];
    }
}

}  // namespace scalea::cli
