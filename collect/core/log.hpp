// Messages from the tool inside the user's process: one line each, prefixed "scalea: ", on stderr.
// Never per event: problems are counted and reported once at the end.
#pragma once

namespace scalea::collect {
void log_message(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
}
