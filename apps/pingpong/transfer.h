// Data transfer: the timed ping-pong loop over the fabric, and the final
// "fin" exchange that tells both sides they may close.
#ifndef APPS_PINGPONG_TRANSFER_H_
#define APPS_PINGPONG_TRANSFER_H_

#include "apps/pingpong/fabric_setup.h"
#include "apps/pingpong/options.h"
#include "apps/pingpong/out_of_band.h"

namespace pingpong {

// Posts the receive for the next message (any size up to the buffer).
int PostReceive(FabricObjects& objects, bool tagged);

// For each size: Sync, then `iterations` round trips (the client sends
// first), then the ack count exchange; prints the result table on stdout.
int RunPingPong(const Options& options, bool is_client, OutOfBand& channel,
                FabricObjects& objects);

// Sends "fin" and waits for the peer's; MSG endpoints then fi_shutdown.
int Finish(const Options& options, FabricObjects& objects);

}  // namespace pingpong

#endif  // APPS_PINGPONG_TRANSFER_H_
