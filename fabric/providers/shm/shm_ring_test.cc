#include "fabric/providers/shm/shm_ring.h"

#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <string>
#include <vector>

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

// Peek lends the bytes of one chunk up to the end of the data area; the
// rest follows from the start once those are consumed, and Read agrees
// with what was consumed.
TEST(ShmRingTest, PeekLendsContiguousBytesAndConsumeFreesThem) {
  auto mem = RingMemory(32);
  ByteRing producer = ByteRing::Init(mem.get(), 32).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(32)).value();
  size_t length = 99;
  ASSERT_NE(consumer.Peek(&length), nullptr);
  EXPECT_EQ(length, 0u);
  // A chunk of 8 bytes at 0 (its word at 0, bytes 8..16), read.
  ASSERT_EQ(WriteString(producer, "01234567"), 8u);
  ASSERT_EQ(ReadString(consumer, 8), "01234567");
  // Its word at 16, bytes 24..32 and 0..4: they wrap.
  ASSERT_EQ(producer.Writable(), 16u);
  ASSERT_EQ(WriteString(producer, "abcdefghijkl"), 12u);
  const char* bytes = consumer.Peek(&length);
  ASSERT_EQ(length, 8u);  // "abcdefgh" up to the end of the data area
  EXPECT_EQ(std::string(bytes, length), "abcdefgh");
  consumer.Consume(length);
  bytes = consumer.Peek(&length);
  ASSERT_EQ(length, 4u);
  EXPECT_EQ(std::string(bytes, length), "ijkl");
  consumer.Consume(2);
  EXPECT_TRUE(consumer.Readable());
  EXPECT_EQ(ReadString(consumer, 16), "kl");
  EXPECT_FALSE(consumer.Readable());
  consumer.Peek(&length);
  EXPECT_EQ(length, 0u);
  EXPECT_EQ(producer.Writable(), 16u);  // all free but the words
}

// Bytes that a ring cannot have: a word without the chunk's magic, and
// one claiming more than the ring holds.
TEST(ShmRingTest, PeekOnACorruptRingLendsNothing) {
  for (uint64_t word : {uint64_t{0x1234}, (kChunkMagic << 32) | 1000}) {
    auto mem = RingMemory(32);
    ByteRing consumer = ByteRing::Init(mem.get(), 32).value();
    memcpy(mem.get() + sizeof(RingHeader), &word, sizeof(word));
    size_t length = 99;
    EXPECT_EQ(consumer.Peek(&length), nullptr) << word;
    EXPECT_EQ(length, 0u);
    EXPECT_TRUE(consumer.corrupt());
  }
}

TEST(ShmRingTest, WrapsAroundWithOddSizes) {
  auto mem = RingMemory(64);
  ByteRing producer = ByteRing::Init(mem.get(), 64).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(64)).value();
  EXPECT_EQ(consumer.capacity(), 64u);
  uint64_t written = 0, read = 0;
  for (int round = 0; round < 500; ++round) {
    size_t wlen = 1 + (round * 7) % 13;  // 1..13, odd steps
    std::string out;
    for (size_t i = 0; i < wlen; ++i) out += char('a' + (written + i) % 23);
    size_t room = producer.Writable();
    size_t n = WriteString(producer, out);
    ASSERT_EQ(n, std::min(wlen, room));
    written += n;
    ASSERT_EQ(consumer.Readable(), written > read);
    std::string in = ReadString(consumer, 1 + (round * 5) % 11);
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(in[i], char('a' + (read + i) % 23)) << "round " << round;
    }
    read += in.size();
  }
  EXPECT_GT(written, 64u * 20);  // wrapped many times
  EXPECT_FALSE(producer.corrupt());
  EXPECT_FALSE(consumer.corrupt());
}

// What an earlier lap left where a chunk starts is never taken for its
// control word, even bytes that look like one.
TEST(ShmRingTest, BytesThatLookLikeControlWordsAreOnlyBytes) {
  auto mem = RingMemory(128);
  ByteRing producer = ByteRing::Init(mem.get(), 128).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(128)).value();
  uint64_t written = 0, read = 0;
  for (int round = 0; round < 400; ++round) {
    // 1 to 7 control words, each saying "8 bytes follow", then a count.
    std::vector<uint64_t> out(1 + round % 7, (kChunkMagic << 32) | 8);
    out.back() = round;
    iovec iov = {out.data(), out.size() * sizeof(uint64_t)};
    ASSERT_EQ(producer.Write(&iov, 1, 0), iov.iov_len) << round;
    written += iov.iov_len;
    std::vector<uint64_t> in(out.size());
    iovec to = {in.data(), in.size() * sizeof(uint64_t)};
    ASSERT_EQ(consumer.Read(&to, 1), to.iov_len) << round;
    read += to.iov_len;
    ASSERT_EQ(in, out) << round;
    ASSERT_FALSE(consumer.Readable()) << round;
  }
  EXPECT_GT(written, 128u * 50);
  EXPECT_FALSE(consumer.corrupt());
}

TEST(ShmRingTest, WritesPartlyWhenFull) {
  auto mem = RingMemory(32);
  ByteRing ring = ByteRing::Init(mem.get(), 32).value();
  const std::string data = "0123456789abcdefghijklmnopqrstuv";
  EXPECT_EQ(WriteString(ring, data), 16u);  // 16 + its words
  EXPECT_EQ(ring.Writable(), 0u);
  EXPECT_TRUE(ring.Readable());
  EXPECT_EQ(WriteString(ring, data, 16), 0u);
  EXPECT_EQ(ReadString(ring, 3), "012");
  EXPECT_EQ(ring.Writable(), 0u);  // 3 free bytes hold no chunk
  EXPECT_EQ(ReadString(ring, 8), "3456789a");
  EXPECT_EQ(ring.Writable(), 8u);
  EXPECT_EQ(WriteString(ring, data, 16), 8u);  // "ghijklmn", wrapping
  EXPECT_EQ(WriteString(ring, data, 24), 0u);
  EXPECT_EQ(ReadString(ring, 100), "bcdefghijklmn");
  EXPECT_FALSE(ring.Readable());
  EXPECT_EQ(ReadString(ring, 100), "");
  EXPECT_EQ(WriteString(ring, data, 24), 8u);
  EXPECT_EQ(ReadString(ring, 100), "opqrstuv");
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

// A list of pieces (empty ones too) arrives whole wherever its chunk starts
// in a cache line, and where it wraps: the bytes that share the control
// word's line are written apart from the rest.
TEST(ShmRingTest, ListsArriveWholeWhereverTheirChunkStarts) {
  auto mem = RingMemory(512);
  ByteRing producer = ByteRing::Init(mem.get(), 512).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(512)).value();
  std::string pieces[] = {"a",
                          "",
                          std::string(7, 'b'),
                          std::string(40, 'c'),
                          "def",
                          std::string(64, 'g'),
                          "hi"};
  std::vector<iovec> iov;
  std::string whole;
  for (std::string& piece : pieces) {
    iov.push_back({piece.empty() ? nullptr : piece.data(), piece.size()});
    whole += piece;
  }
  for (size_t filler = 1; filler <= 200; ++filler) {
    // The filler moves where the list's chunk starts (and wraps it).
    ASSERT_EQ(WriteString(producer, std::string(filler, 'x')), filler);
    ASSERT_EQ(producer.Write(iov.data(), iov.size(), 0), whole.size());
    ASSERT_EQ(ReadString(consumer, filler), std::string(filler, 'x'));
    ASSERT_EQ(ReadString(consumer, 512), whole) << "filler " << filler;
  }
  EXPECT_FALSE(consumer.corrupt());
}

// The producer keeps its own copy of the tail: one that attaches to a ring
// holding bytes starts from the shared index, after them.
TEST(ShmRingTest, AnAttachedProducerWritesAfterTheBytesThere) {
  auto mem = RingMemory(64);
  ByteRing first = ByteRing::Init(mem.get(), 64).value();
  ASSERT_EQ(WriteString(first, "0123456789"), 10u);  // 8 + 16 bytes
  ByteRing second =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(64)).value();
  EXPECT_EQ(second.Writable(), 24u);
  EXPECT_EQ(WriteString(second, std::string("abcdefgh") + std::string(20, 'z')),
            24u);
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(64)).value();
  EXPECT_EQ(ReadString(consumer, 64),
            "0123456789abcdefgh" + std::string(16, 'z'));
}

TEST(ShmRingTest, ReadScattersIntoTheIovList) {
  auto mem = RingMemory(32);
  ByteRing ring = ByteRing::Init(mem.get(), 32).value();
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
  auto mem = RingMemory(32);
  ByteRing producer = ByteRing::Init(mem.get(), 32).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(32)).value();
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
  for (size_t capacity : {0, 3, 12, 16, 100}) {
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
  for (Case c :
       {Case{0, 0, 0}, Case{16, 0, 0}, Case{48, 0, 0}, Case{128, 0, 0},
        Case{uint64_t{1} << 63, 0, 0}, Case{64, 0, 72}, Case{64, 16, 8},
        Case{64, 1000, 0}, Case{64, 0, 12}, Case{64, 5, 8}}) {
    Header(mem.get())->capacity = c.capacity;
    Header(mem.get())->head = c.head;
    Header(mem.get())->tail = c.tail;
    absl::StatusOr<ByteRing> ring = ByteRing::Attach(mem.get(), size);
    EXPECT_EQ(ToFiErrno(ring.status()), -FI_EINVAL)
        << c.capacity << " " << c.head << " " << c.tail;
  }
  // Sound ones, wrapped indices included.
  for (Case c :
       {Case{64, 0, 64}, Case{32, 8, 32}, Case{64, UINT64_MAX - 7, 16}}) {
    Header(mem.get())->capacity = c.capacity;
    Header(mem.get())->head = c.head;
    Header(mem.get())->tail = c.tail;
    EXPECT_TRUE(ByteRing::Attach(mem.get(), size).ok())
        << c.capacity << " " << c.head << " " << c.tail;
  }
}

TEST(ShmRingTest, ReaderDetectsImpossibleControlWords) {
  auto mem = RingMemory(64);
  ByteRing producer = ByteRing::Init(mem.get(), 64).value();
  ByteRing consumer =
      ByteRing::Attach(mem.get(), ByteRing::BytesNeeded(64)).value();
  ASSERT_EQ(WriteString(producer, "hello"), 5u);
  uint64_t word = (kChunkMagic << 32) | 65;  // more than the ring holds
  memcpy(mem.get() + sizeof(RingHeader), &word, sizeof(word));
  EXPECT_EQ(ReadString(consumer, 64), "");
  EXPECT_TRUE(consumer.corrupt());
  EXPECT_FALSE(consumer.Readable());
  // Sticky: a sound word again does not make it trusted again.
  word = (kChunkMagic << 32) | 5;
  memcpy(mem.get() + sizeof(RingHeader), &word, sizeof(word));
  EXPECT_EQ(ReadString(consumer, 64), "");
  EXPECT_EQ(Header(mem.get())->head.load(), 0u);
}

TEST(ShmRingTest, WriterDetectsCorruptIndices) {
  auto mem = RingMemory(64);
  ByteRing producer = ByteRing::Init(mem.get(), 64).value();
  ASSERT_EQ(WriteString(producer, "hello"), 5u);  // tail 16
  Header(mem.get())->head = 24;                   // past the tail
  // Seen when the producer next needs the consumer's index: for more room
  // than it last knew of.
  EXPECT_EQ(WriteString(producer, std::string(60, 'm')), 0u);
  EXPECT_TRUE(producer.corrupt());
  EXPECT_EQ(producer.Writable(), 0u);
  EXPECT_EQ(Header(mem.get())->tail.load(), 16u);
}

}  // namespace
}  // namespace shm
}  // namespace fabric
