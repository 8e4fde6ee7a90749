#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace scalea::cli {

std::string csv_field(const std::string& s, bool always) {
  if (!always && s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool parse_duration(const std::string& text, double& seconds) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0) || !std::isfinite(v)) return false;
  std::string unit(end);
  double scale = unit == "ms" ? 1e-3 : unit.empty() || unit == "s" ? 1 : unit == "min" ? 60 : 0;
  if (scale == 0) return false;
  seconds = v * scale;
  return true;
}

}  // namespace scalea::cli
