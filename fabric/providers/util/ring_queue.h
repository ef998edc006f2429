// File: fabric/providers/util/ring_queue.h
//
// A first-in first-out queue in one growing array, for queues that a
// polling loop fills and drains all the time (completions): unlike
// std::deque, which allocates and frees a block every few elements as the
// queue moves through memory, it allocates only when it grows past its
// largest size so far.
//
//   RingQueue<CqEntry> entries;
//   entries.push_back(std::move(entry));
//   CqEntry& first = entries.front();
//   entries.pop_front();  // a slot of a T that owns memory is reset to T{}
//   for (auto it = entries.begin(); it != entries.end(); ++it) ...
//   entries.erase(it);    // the oldest in O(1), others by moving the rest
#ifndef FABRIC_PROVIDERS_UTIL_RING_QUEUE_H_
#define FABRIC_PROVIDERS_UTIL_RING_QUEUE_H_

#include <stddef.h>

#include <type_traits>
#include <utility>
#include <vector>

namespace fabric {

template <typename T>
class RingQueue {
 public:
  // Walks the elements oldest first; erase and insertion invalidate it.
  template <typename Queue, typename Value>
  class Iterator {
   public:
    Iterator(Queue* queue, size_t index) : queue_(queue), index_(index) {}
    Value& operator*() const { return (*queue_)[index_]; }
    Value* operator->() const { return &(*queue_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator==(const Iterator& other) const {
      return index_ == other.index_;
    }
    bool operator!=(const Iterator& other) const {
      return index_ != other.index_;
    }
    size_t index() const { return index_; }

   private:
    Queue* queue_;
    size_t index_;
  };
  using iterator = Iterator<RingQueue, T>;
  using const_iterator = Iterator<const RingQueue, const T>;

  iterator begin() { return iterator(this, 0); }
  iterator end() { return iterator(this, size_); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // The oldest element; the queue must not be empty.
  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }

  void push_back(T value) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }

  // The element `i` places behind the oldest (i < size()).
  T& operator[](size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const T& operator[](size_t i) const {
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }

  // Puts `value` before the oldest element.
  void push_front(T value) {
    if (size_ == slots_.size()) Grow();
    head_ = (head_ + slots_.size() - 1) & (slots_.size() - 1);
    slots_[head_] = std::move(value);
    ++size_;
  }

  // Removes element `i` (i < size()), keeping the others in order.
  void erase(size_t i) {
    if (i == 0) {
      pop_front();
      return;
    }
    for (; i + 1 < size_; ++i) (*this)[i] = std::move((*this)[i + 1]);
    (*this)[size_ - 1] = T{};
    --size_;
  }
  void erase(iterator it) { erase(it.index()); }

  // Removes every element.
  void clear() {
    while (!empty()) pop_front();
  }

  // Drops the oldest element; the queue must not be empty.
  void pop_front() {
    // Only elements that own memory need their slot reset.
    if constexpr (!std::is_trivially_destructible_v<T>) slots_[head_] = T{};
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

 private:
  // Doubles the array (a power of two, so positions wrap with a mask),
  // keeping the elements in order from position 0.
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? 4 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) {
      bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace fabric

#endif  // FABRIC_PROVIDERS_UTIL_RING_QUEUE_H_
