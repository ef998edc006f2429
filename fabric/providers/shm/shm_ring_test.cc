#include "fabric/providers/shm/shm_ring.h"

#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>

#include "fabric/api/core/status.h"
#include "gtest/gtest.h"

namespace fabric {
namespace shm {
namespace {

// Ring memory as a segment's payload would give it: 64-byte aligned.
struct FreeDeleter {
  void operator()(void* p) const { free(p); }
};
std::unique_ptr<char, FreeDeleter> RingMemory(size_t capacity) {
  size_t bytes = (ByteRing::BytesNeeded(capacity) + 63) / 64 * 64;
  auto mem = std::unique_ptr<char, FreeDeleter>(
      static_cast<char*>(aligned_alloc(64, bytes)));
  memset(mem.get(), 0xa5, bytes);
  return mem;
}

size_t WriteString(ByteRing& ring, const std::string& s, size_t skip = 0) {
  iovec iov = {const_cast<char*>(s.data()), s.size()};
  return ring.Write(&iov, 1, skip);
}

std::string ReadString(ByteRing& ring, size_t max) {
  std::string s(max, '\0');
  iovec iov = {s.data(), s.size()};
  s.resize(ring.Read(&iov, 1));
  return s;
}

RingHeader* Header(void* mem) { return static_cast<RingHeader*>(mem); }

TEST(ShmRingTest, BytesNeededIsHeaderPlusData) {
  EXPECT_EQ(ByteRing::BytesNeeded(4096), sizeof(RingHeader) + 4096);
  EXPECT_EQ(sizeof(RingHeader) % 64, 0u);
  EXPECT_NE(offsetof(RingHeader, tail) / 64, offsetof(RingHeader, head) / 64);
}

// Peek lends the bytes up to the end of the data area; the rest follows
// from the start once those are consumed, and Read agrees with what was
// consumed.
TEST(ShmRingTest, PeekLendsContiguousBytesAndConsumeFreesThem) {
  auto mem = RingMemory(16);
  ByteRing producer = ByteRing::Init(mem.get(), 16).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(16)).value();
  size_t length = 99;
  ASSERT_NE(consumer.Peek(&length), nullptr);
  EXPECT_EQ(length, 0u);
  ASSERT_EQ(WriteString(producer, "0123456789ab"), 12u);
  ASSERT_EQ(ReadString(consumer, 10), "0123456789");
  ASSERT_EQ(WriteString(producer, "cdefghij"), 8u);  // wraps after "cdef"
  const char* bytes = consumer.Peek(&length);
  ASSERT_EQ(length, 6u);  // "abcdef" up to the end of the data area
  EXPECT_EQ(std::string(bytes, length), "abcdef");
  EXPECT_EQ(producer.Writable(), 16u - 10u);
  consumer.Consume(length);
  EXPECT_EQ(producer.Writable(), 12u);
  bytes = consumer.Peek(&length);
  ASSERT_EQ(length, 4u);
  EXPECT_EQ(std::string(bytes, length), "ghij");
  consumer.Consume(2);
  EXPECT_EQ(ReadString(consumer, 16), "ij");
  consumer.Peek(&length);
  EXPECT_EQ(length, 0u);
}

TEST(ShmRingTest, PeekOnACorruptRingLendsNothing) {
  auto mem = RingMemory(16);
  ByteRing consumer = ByteRing::Init(mem.get(), 16).value();
  Header(mem.get())->tail.store(1000);  // impossible: more than the capacity
  size_t length = 99;
  EXPECT_EQ(consumer.Peek(&length), nullptr);
  EXPECT_EQ(length, 0u);
  EXPECT_TRUE(consumer.corrupt());
}

TEST(ShmRingTest, WrapsAroundWithOddSizes) {
  auto mem = RingMemory(16);
  ByteRing producer = ByteRing::Init(mem.get(), 16).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(16)).value();
  EXPECT_EQ(consumer.capacity(), 16u);
  uint64_t written = 0, read = 0;
  for (int round = 0; round < 500; ++round) {
    size_t wlen = 1 + (round * 7) % 13;  // 1..13, odd steps
    std::string out;
    for (size_t i = 0; i < wlen; ++i) out += char('a' + (written + i) % 23);
    size_t room = producer.Writable();
    ASSERT_EQ(room, 16 - (written - read));
    size_t n = WriteString(producer, out);
    ASSERT_EQ(n, std::min(wlen, room));
    written += n;
    ASSERT_EQ(consumer.Readable(), written - read);
    std::string in = ReadString(consumer, 1 + (round * 5) % 11);
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(in[i], char('a' + (read + i) % 23)) << "round " << round;
    }
    read += in.size();
  }
  EXPECT_GT(written, 16u * 100);  // wrapped many times
  EXPECT_FALSE(producer.corrupt());
  EXPECT_FALSE(consumer.corrupt());
}

TEST(ShmRingTest, WritesPartlyWhenFull) {
  auto mem = RingMemory(8);
  ByteRing ring = ByteRing::Init(mem.get(), 8).value();
  const std::string data = "0123456789abc";
  EXPECT_EQ(WriteString(ring, data), 8u);
  EXPECT_EQ(ring.Writable(), 0u);
  EXPECT_EQ(ring.Readable(), 8u);
  EXPECT_EQ(WriteString(ring, data, 8), 0u);
  EXPECT_EQ(ReadString(ring, 3), "012");
  EXPECT_EQ(ring.Writable(), 3u);
  EXPECT_EQ(WriteString(ring, data, 8), 3u);  // "89a", wrapping
  EXPECT_EQ(WriteString(ring, data, 11), 0u);
  EXPECT_EQ(ReadString(ring, 100), "3456789a");
  EXPECT_EQ(ring.Readable(), 0u);
  EXPECT_EQ(ReadString(ring, 100), "");
  EXPECT_EQ(WriteString(ring, data, 11), 2u);
  EXPECT_EQ(ReadString(ring, 100), "bc");
}

TEST(ShmRingTest, WriteSkipsIntoTheIovList) {
  auto mem = RingMemory(64);
  ByteRing ring = ByteRing::Init(mem.get(), 64).value();
  char a[] = "abc", d[] = "defg", h[] = "hi";
  iovec iov[] = {{a, 3}, {nullptr, 0}, {d, 4}, {h, 2}};
  struct Case {
    size_t skip;
    const char* expect;
  };
  for (Case c : {Case{0, "abcdefghi"}, Case{2, "cdefghi"}, Case{3, "defghi"},
                 Case{4, "efghi"}, Case{7, "hi"}, Case{8, "i"}, Case{9, ""},
                 Case{50, ""}}) {
    EXPECT_EQ(ring.Write(iov, 4, c.skip), strlen(c.expect)) << c.skip;
    EXPECT_EQ(ReadString(ring, 64), c.expect) << c.skip;
  }
  EXPECT_EQ(ring.Write(nullptr, 0, 0), 0u);
}

// The producer keeps its own copy of the tail: one that attaches to a ring
// holding bytes starts from the shared index, after them.
TEST(ShmRingTest, AnAttachedProducerWritesAfterTheBytesThere) {
  auto mem = RingMemory(16);
  ByteRing first = ByteRing::Init(mem.get(), 16).value();
  ASSERT_EQ(WriteString(first, "0123456789"), 10u);
  ByteRing second =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(16)).value();
  EXPECT_EQ(second.Writable(), 6u);
  EXPECT_EQ(WriteString(second, "abcdefgh"), 6u);
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(16)).value();
  EXPECT_EQ(ReadString(consumer, 16), "0123456789abcdef");
}

TEST(ShmRingTest, ReadScattersIntoTheIovList) {
  auto mem = RingMemory(16);
  ByteRing ring = ByteRing::Init(mem.get(), 16).value();
  ASSERT_EQ(WriteString(ring, "0123456789"), 10u);
  char x[3] = {}, y[4] = {}, z[8] = {};
  iovec iov[] = {{x, 2}, {nullptr, 0}, {y, 4}, {z, 8}};
  EXPECT_EQ(ring.Read(iov, 4), 10u);
  EXPECT_STREQ(x, "01");
  EXPECT_EQ(std::string(y, 4), "2345");
  EXPECT_STREQ(z, "6789");
  EXPECT_EQ(ring.Read(iov, 4), 0u);
}

TEST(ShmRingTest, ClosingIsSeenByTheOtherSide) {
  auto mem = RingMemory(16);
  ByteRing producer = ByteRing::Init(mem.get(), 16).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(16)).value();
  ASSERT_EQ(WriteString(producer, "last"), 4u);
  EXPECT_FALSE(consumer.writer_closed());
  producer.CloseWriter();
  EXPECT_TRUE(consumer.writer_closed());
  EXPECT_FALSE(consumer.AtEnd());  // "last" is still to be read
  EXPECT_EQ(ReadString(consumer, 16), "last");
  EXPECT_TRUE(consumer.AtEnd());
  EXPECT_FALSE(producer.reader_closed());
  consumer.CloseReader();
  EXPECT_TRUE(producer.reader_closed());
}

TEST(ShmRingTest, InitRefusesBadArguments) {
  auto mem = RingMemory(64);
  for (size_t capacity : {0, 3, 12, 100}) {
    EXPECT_EQ(ToFiErrno(ByteRing::Init(mem.get(), capacity).status()),
              -FI_EINVAL)
        << capacity;
  }
  EXPECT_EQ(ToFiErrno(ByteRing::Init(mem.get() + 8, 64).status()), -FI_EINVAL);
  EXPECT_EQ(ToFiErrno(ByteRing::Init(nullptr, 64).status()), -FI_EINVAL);
}

TEST(ShmRingTest, AttachRefusesMalformedHeaders) {
  auto mem = RingMemory(64);
  const size_t size = ByteRing::BytesNeeded(64);
  ASSERT_TRUE(ByteRing::Init(mem.get(), 64).ok());
  EXPECT_TRUE(ByteRing::Attach(mem.get(), size).ok());
  EXPECT_FALSE(ByteRing::Attach(mem.get(), size - 1).ok());  // data cut short
  EXPECT_FALSE(ByteRing::Attach(mem.get(), sizeof(RingHeader) - 1).ok());
  EXPECT_FALSE(ByteRing::Attach(mem.get() + 8, size - 8).ok());
  EXPECT_FALSE(ByteRing::Attach(nullptr, size).ok());

  struct Case {
    uint64_t capacity, head, tail;
  };
  for (Case c : {Case{0, 0, 0}, Case{48, 0, 0}, Case{128, 0, 0},
                 Case{uint64_t{1} << 63, 0, 0}, Case{64, 0, 65},
                 Case{64, 10, 9}, Case{64, 1000, 0}}) {
    Header(mem.get())->capacity = c.capacity;
    Header(mem.get())->head = c.head;
    Header(mem.get())->tail = c.tail;
    absl::StatusOr<ByteRing> ring = ByteRing::Attach(mem.get(), size);
    EXPECT_EQ(ToFiErrno(ring.status()), -FI_EINVAL)
        << c.capacity << " " << c.head << " " << c.tail;
  }
  // Sound ones, wrapped indices included.
  for (Case c :
       {Case{64, 0, 64}, Case{32, 5, 37}, Case{64, UINT64_MAX - 3, 20}}) {
    Header(mem.get())->capacity = c.capacity;
    Header(mem.get())->head = c.head;
    Header(mem.get())->tail = c.tail;
    EXPECT_TRUE(ByteRing::Attach(mem.get(), size).ok())
        << c.capacity << " " << c.head << " " << c.tail;
  }
}

TEST(ShmRingTest, ReaderDetectsCorruptIndices) {
  auto mem = RingMemory(64);
  ByteRing producer = ByteRing::Init(mem.get(), 64).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(64)).value();
  ASSERT_EQ(WriteString(producer, "hello"), 5u);
  Header(mem.get())->tail = 64 + 1;  // more than the ring holds
  EXPECT_EQ(consumer.Readable(), 0u);
  EXPECT_TRUE(consumer.corrupt());
  EXPECT_EQ(ReadString(consumer, 64), "");
  // Sticky: sound indices again do not make it trusted again.
  Header(mem.get())->tail = 5;
  EXPECT_EQ(ReadString(consumer, 64), "");
  EXPECT_EQ(Header(mem.get())->head.load(), 0u);
}

TEST(ShmRingTest, WriterDetectsCorruptIndices) {
  auto mem = RingMemory(64);
  ByteRing producer = ByteRing::Init(mem.get(), 64).value();
  ASSERT_EQ(WriteString(producer, "hello"), 5u);
  Header(mem.get())->head = 6;  // past the tail
  // Seen when the producer next needs the consumer's index: for more room
  // than it last knew of.
  EXPECT_EQ(WriteString(producer, std::string(60, 'm')), 0u);
  EXPECT_TRUE(producer.corrupt());
  EXPECT_EQ(producer.Writable(), 0u);
  EXPECT_EQ(Header(mem.get())->tail.load(), 5u);
}

}  // namespace
}  // namespace shm
}  // namespace fabric
