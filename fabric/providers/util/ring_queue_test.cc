#include "fabric/providers/util/ring_queue.h"

#include <deque>
#include <memory>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace fabric {
namespace {

TEST(RingQueueTest, KeepsOrderAcrossGrowthAndWrapping) {
  RingQueue<int> queue;
  EXPECT_TRUE(queue.empty());
  // Wrap around a 4-slot array before it grows, then grow while wrapped.
  for (int i = 0; i < 3; ++i) queue.push_back(i);
  queue.pop_front();
  queue.pop_front();
  for (int i = 3; i < 20; ++i) queue.push_back(i);
  EXPECT_EQ(queue.size(), 18u);
  for (int i = 2; i < 20; ++i) {
    ASSERT_FALSE(queue.empty());
    EXPECT_EQ(queue.front(), i);
    queue.pop_front();
  }
  EXPECT_TRUE(queue.empty());
}

TEST(RingQueueTest, BehavesAsADequeUnderRandomUse) {
  RingQueue<std::string> queue;
  std::deque<std::string> model;
  std::mt19937 random(7);
  for (int step = 0; step < 20000; ++step) {
    if (model.empty() || random() % 3 != 0) {
      std::string value = std::to_string(step);
      queue.push_back(value);
      model.push_back(value);
    } else {
      ASSERT_EQ(queue.front(), model.front());
      queue.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(queue.size(), model.size());
  }
}

TEST(RingQueueTest, PopReleasesWhatTheElementOwned) {
  RingQueue<std::shared_ptr<int>> queue;
  auto value = std::make_shared<int>(1);
  queue.push_back(value);
  EXPECT_EQ(value.use_count(), 2);
  queue.pop_front();
  EXPECT_EQ(value.use_count(), 1);
}

}  // namespace
}  // namespace fabric
