// The six SCALEA overhead classes and their subclasses: the keys every output uses.
#pragma once
#include <array>
#include <string_view>

namespace scalea::overheads {

enum class Class {
  DataMovement,
  Synchronization,
  ControlOfParallelism,
  AdditionalComputation,
  LossOfParallelism,
  Unidentified,
};
inline constexpr int kClassCount = 6;

inline constexpr std::array<std::string_view, kClassCount> kClassKeys = {
    "data_movement",          "synchronization",     "control_of_parallelism",
    "additional_computation", "loss_of_parallelism", "unidentified"};

inline constexpr std::string_view class_key(Class c) { return kClassKeys[size_t(c)]; }

}  // namespace scalea::overheads
