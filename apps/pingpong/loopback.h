// --loopback: for every provider and endpoint type that fi_getinfo reports,
// starts a server and a client (this program again) on 127.0.0.1 and prints
// the client's table under a heading line.
#ifndef APPS_PINGPONG_LOOPBACK_H_
#define APPS_PINGPONG_LOOPBACK_H_

#include "apps/pingpong/options.h"

namespace pingpong {

// 0 when every case passed; -p and -e narrow the cases.
int RunLoopback(const Options& options);

}  // namespace pingpong

#endif  // APPS_PINGPONG_LOOPBACK_H_
