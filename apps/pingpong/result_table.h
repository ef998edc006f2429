// fi_pingpong's result table, character for character.
#ifndef APPS_PINGPONG_RESULT_TABLE_H_
#define APPS_PINGPONG_RESULT_TABLE_H_

#include <cstdint>
#include <string>

namespace pingpong {

// "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec"
std::string ResultHeader();

// One row: `sent` round trips of `size` bytes each way (2 transfers each)
// in `elapsed_usec`; `acked` is the peer's receive count.
std::string ResultRow(int size, long sent, long acked, int64_t elapsed_usec);

// fi_pingpong's short sizes and counts: 1536 -> "1.5k", 25000 -> "25k".
std::string SizeText(uint64_t size);
std::string CountText(uint64_t count);

}  // namespace pingpong

#endif  // APPS_PINGPONG_RESULT_TABLE_H_
