// ThreadPool: every thread runs every task once, on its own index, and the
// per-thread task counts say so (they are how the wasm tests prove that
// pthreads take part).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace wllm {
namespace {

TEST(ThreadPool, RunsEachIndexOncePerTaskOnDistinctThreads) {
  ThreadPool pool(3);
  std::vector<std::thread::id> ran_on(3);
  std::atomic<int> calls{0};
  for (int task = 0; task < 5; ++task) {
    pool.run([&](int i, int n) {
      EXPECT_EQ(n, 3);
      ran_on[i] = std::this_thread::get_id();
      calls.fetch_add(1);
    });
  }
  EXPECT_EQ(calls.load(), 15);
  EXPECT_EQ(ran_on[0], std::this_thread::get_id());  // the caller is thread 0
  EXPECT_NE(ran_on[1], ran_on[0]);
  EXPECT_NE(ran_on[2], ran_on[0]);
  EXPECT_NE(ran_on[1], ran_on[2]);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pool.tasks_run(i), 5u) << "thread " << i;
}

TEST(ThreadPool, SingleThreadRunsInlineAndCounts) {
  ThreadPool pool(1);
  std::thread::id ran_on;
  pool.run([&](int i, int n) {
    EXPECT_EQ(i, 0);
    EXPECT_EQ(n, 1);
    ran_on = std::this_thread::get_id();
  });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(pool.tasks_run(0), 1u);
}

}  // namespace
}  // namespace wllm
