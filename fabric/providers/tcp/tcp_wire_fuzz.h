// File: fabric/providers/tcp/tcp_wire_fuzz.h
//
// Fuzzing of the tcp provider's wire decoders (gcc has no libFuzzer): byte
// streams, valid ones and mutated ones (corrupted fields, truncation, huge
// sizes, unknown opcodes, bad descriptor counts, garbage), are written into
// one end of a socketpair and read by a real Connection or CmReader at the
// other. An independent reading of the wire format (wire.h, tcp_cm.h)
// predicts what the decoder must report; any difference is a failure.
#ifndef FABRIC_PROVIDERS_TCP_TCP_WIRE_FUZZ_H_
#define FABRIC_PROVIDERS_TCP_TCP_WIRE_FUZZ_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace fabric {
namespace tcp {

struct FuzzStats {
  uint64_t streams = 0;
  uint64_t messages = 0;        // OnMessageDone calls
  uint64_t closed_clean = 0;    // streams that ended in OnClosed(0)
  uint64_t closed_eio = 0;      // streams refused with OnClosed(-FI_EIO)
  uint64_t cm_done = 0;
  uint64_t cm_failed = 0;
};

// Runs `iterations` Connection streams and as many handshakes from `seed`;
// `corpus` holds extra streams to mutate. False, with *error saying why
// (and the iteration), at the first invariant broken.
bool RunWireFuzz(uint64_t seed, uint64_t iterations,
                 const std::vector<std::string>& corpus, FuzzStats* stats,
                 std::string* error);

}  // namespace tcp
}  // namespace fabric

#endif  // FABRIC_PROVIDERS_TCP_TCP_WIRE_FUZZ_H_
