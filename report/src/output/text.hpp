// Small text helpers every output of the CLI shares: CSV fields, medians, durations, units.
#pragma once
#include <string>
#include <vector>

namespace scalea::cli {

// The experiments' times (ns, format::MetricUnit::Ns) in the seconds every output shows.
constexpr double ns_to_s(double ns) { return ns * 1e-9; }

// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a line
// break, or always when `always`.
std::string csv_field(const std::string& s, bool always = false);

// `v` with `decimals` digits after the point, as "{:.9f}" prints it, except that a value that
// rounds to zero has no sign: "0.000000000", never "-0.000000000" (a class of -1e-12 s).
std::string fixed(double v, int decimals);

// A count with thousands separators: "126,250".
std::string grouped(double count);

// A software event that counts the nanoseconds a thread ran (perf::TASK-CLOCK, perf::CPU-CLOCK).
bool is_cpu_time_counter(const std::string& name);

// A counter's value as the text outputs show it: a CPU-time counter in seconds ("0.289 s"), any
// other with thousands separators ("126,250").
std::string counter_value(const std::string& name, double v);

// The median of `v` (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> v);

// A duration as the snapshot settings take it: "2s", "500ms", or a number of seconds. False when
// it is not one (or not positive).
bool parse_duration(const std::string& text, double& seconds);

}  // namespace scalea::cli
