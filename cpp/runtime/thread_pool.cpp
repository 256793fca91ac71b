#include "runtime/thread_pool.h"

#include <algorithm>

namespace wllm {
namespace {
// Spin this many polls (tens of microseconds) before sleeping: operations
// follow each other within microseconds during a forward pass, and a futex
// wake costs more than that. A tenth as many let the workers fall asleep
// between operations, and 2 threads then ran slower than 1 (figures:
// docs/performance.md, "Measurements behind the code").
constexpr int kSpinPolls = 200000;
}  // namespace

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(std::max(1, n_threads)), tasks_run_(std::make_unique<TaskCounter[]>(n_threads_)) {
  workers_.reserve(n_threads_ - 1);
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int ThreadPool::default_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp<unsigned>(hw == 0 ? 1 : hw, 1, 8));
}

void ThreadPool::run(TaskFn fn, void* ctx) {
  tasks_run_[0].n.fetch_add(1, std::memory_order_relaxed);
  if (n_threads_ == 1) {
    fn(ctx, 0, 1);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  fn(ctx, 0, n_threads_);
  for (int i = 0; i < kSpinPolls; ++i) {
    if (pending_.load(std::memory_order_acquire) == 0) return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    bool woke = false;
    for (int i = 0; i < kSpinPolls && !woke; ++i) woke = generation_.load(std::memory_order_acquire) != seen;
    if (!woke) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    fn_(ctx_, index, n_threads_);
    tasks_run_[index].n.fetch_add(1, std::memory_order_relaxed);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_one();
    }
  }
}

}  // namespace wllm
