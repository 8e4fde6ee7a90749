// Small text helpers every output of the CLI shares: CSV fields, medians.
#pragma once
#include <string>
#include <vector>

namespace scalea::cli {

// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a line
// break, or always when `always`.
std::string csv_field(const std::string& s, bool always = false);

// The median of `v` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> v);

}  // namespace scalea::cli
