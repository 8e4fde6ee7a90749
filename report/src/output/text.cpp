#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace scalea::cli {

std::string csv_field(const std::string& s, bool always) {
  if (!always && s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string fixed(double v, int decimals) {
  std::string s = fmt::format("{:.{}f}", v, decimals);
  if (!s.empty() && s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);
  return s;
}

std::string grouped(double count) {
  std::string digits = fmt::format("{:.0f}", count), out;
  size_t lead = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > lead && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

bool is_cpu_time_counter(const std::string& name) {
  return name.size() >= 10 && (name.compare(name.size() - 10, 10, "TASK-CLOCK") == 0 ||
                               name.compare(name.size() - 9, 9, "CPU-CLOCK") == 0);
}

std::string counter_value(const std::string& name, double v) {
  return is_cpu_time_counter(name) ? fmt::format("{:.3f} s", ns_to_s(v)) : grouped(v);
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
