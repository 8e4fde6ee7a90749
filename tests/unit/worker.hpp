// A persistent "other thread" for synthetic OMPT sequences: it runs the steps handed to it, one
// at a time, so one simulated OpenMP thread keeps its ThreadState across the steps of a scenario
// while the caller decides the global order of events.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/recorder.hpp"

namespace scalea::collect {

class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    run(nullptr);
    thread_.join();
  }
  void run(std::function<void()> step) {
    std::unique_lock<std::mutex> lock(mu_);
    step_ = std::move(step);
    has_step_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !has_step_; });
  }
  ThreadState* state() { return state_; }

 private:
  void loop() {
    state_ = Recorder::get().thread();
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return has_step_; });
      if (!step_) {
        has_step_ = false;
        cv_.notify_all();
        return;
      }
      step_();
      has_step_ = false;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> step_;
  bool has_step_ = false;
  ThreadState* state_ = nullptr;
  std::thread thread_;
};

}  // namespace scalea::collect
