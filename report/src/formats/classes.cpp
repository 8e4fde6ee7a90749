#include "classes.hpp"

namespace scalea::cli {

using overheads::kClassCount;

const std::array<std::string_view, kClassCount> kClassColors = {
    "#9ecae1",  // data_movement: blue
    "#fc9272",  // synchronization: red
    "#fdd0a2",  // control_of_parallelism: orange
    "#a1d99b",  // additional_computation: green
    "#bcbddc",  // loss_of_parallelism: purple
    "#d9d9d9",  // unidentified: grey
};
const std::array<std::string_view, kClassCount> kClassShort = {"data", "sync", "control",
                                                               "addl", "loss", "unident"};

}  // namespace scalea::cli
