#include "fabric/providers/util/ring_queue.h"

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <utility>

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
    unsigned choice = random() % 9;
    if (model.empty() || choice < 4) {
      std::string value = std::to_string(step);
      queue.push_back(value);
      model.push_back(value);
    } else if (choice == 4) {
      std::string value = "front" + std::to_string(step);
      queue.push_front(value);
      model.push_front(value);
    } else if (choice == 5) {
      ASSERT_EQ(queue.front(), model.front());
      queue.pop_front();
      model.pop_front();
    } else if (choice == 6) {
      // Erase through an iterator found by walking, as FindRecv does.
      size_t i = random() % model.size();
      auto it = queue.begin();
      for (size_t k = 0; k < i; ++k) ++it;
      ASSERT_EQ(*it, model[i]);
      queue.erase(it);
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (choice == 7 && step % 50 == 0) {
      queue.clear();
      model.clear();
    } else {
      size_t i = random() % model.size();
      queue.erase(i);
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(i));
    }
    ASSERT_EQ(queue.size(), model.size());
    if (step % 97 == 0) {
      for (size_t i = 0; i < model.size(); ++i) ASSERT_EQ(queue[i], model[i]);
      size_t walked = 0;
      for (const std::string& value : std::as_const(queue)) {
        ASSERT_EQ(value, model[walked++]);
      }
      ASSERT_EQ(walked, model.size());
    }
  }
}

TEST(RingQueueTest, EraseReleasesTheLastSlotAndKeepsOrder) {
  RingQueue<std::shared_ptr<int>> queue;
  auto first = std::make_shared<int>(1);
  auto second = std::make_shared<int>(2);
  auto third = std::make_shared<int>(3);
  queue.push_back(first);
  queue.push_back(second);
  queue.push_back(third);
  queue.erase(1);
  EXPECT_EQ(second.use_count(), 1);
  EXPECT_EQ(third.use_count(), 2);  // moved down, not copied
  ASSERT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue[0], first);
  EXPECT_EQ(queue[1], third);
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
