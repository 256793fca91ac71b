// A persistent pool of worker threads. Threads are created once (at model
// load) and reused for every operation: in wasm they are Web Workers, and
// creating one costs far more than a token. The caller's thread takes part as
// thread 0, so a pool of size 1 runs everything inline with no threads at all.
//
// Work is split by the callee (see split_range) so a given output row is always
// computed by exactly one thread, in full: results never depend on the thread
// count (design-notes §2).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wllm {

class ThreadPool {
 public:
  using TaskFn = void (*)(void* ctx, int thread_index, int n_threads);

  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(ctx, i, size()) for every i in [0, size()) and returns when all are done.
  void run(TaskFn fn, void* ctx);

  // Same for any callable f(int thread_index, int n_threads).
  template <typename F>
  void run(F&& f) {
    run([](void* c, int i, int n) { (*static_cast<std::remove_reference_t<F>*>(c))(i, n); }, &f);
  }

  // How many tasks thread i has run since the pool was made (thread 0 is the
  // caller's). Lets a caller check that the pool's threads really take part,
  // e.g. that wasm pthreads started in their Web Workers.
  uint64_t tasks_run(int thread_index) const { return tasks_run_[thread_index].n.load(std::memory_order_relaxed); }

  // A sensible default thread count for this machine: hardware threads, capped.
  static int default_threads();

 private:
  void worker_loop(int index);

  int n_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  // One counter per thread, each on its own cache line so counting costs no
  // cache-line traffic between threads.
  struct alignas(64) TaskCounter {
    std::atomic<uint64_t> n{0};
  };
  std::unique_ptr<TaskCounter[]> tasks_run_;
};

// The half-open range [begin, end) of n items that thread i of n_threads owns:
// contiguous, balanced, and a function of (n, i, n_threads) only.
inline void split_range(int64_t n, int thread_index, int n_threads, int64_t* begin, int64_t* end) {
  const int64_t per = n / n_threads, extra = n % n_threads;
  *begin = thread_index * per + (thread_index < extra ? thread_index : extra);
  *end = *begin + per + (thread_index < extra ? 1 : 0);
}

// fn(i) for each i in [0, n): split across the pool when there are several
// (a batch's rows), inline for one (a decode step's, where a hand-off to the
// threads would cost more than the work).
template <typename F>
void for_each_row(ThreadPool& pool, int64_t n, F&& fn) {
  if (n == 1 || pool.size() == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  pool.run([&](int ith, int nth) {
    int64_t begin, end;
    split_range(n, ith, nth, &begin, &end);
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

}  // namespace wllm
