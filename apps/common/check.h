// File: apps/common/check.h
//
// Every libfabric call in the examples is checked: a negative return (an
// error code, -FI_E...) prints what failed with fi_strerror and exits 1.
//
//   FI_CHECK(fi_domain(fabric, info, &domain, nullptr));
//
// prints, for instance,
//   rds_example: fi_domain(fabric, info, &domain, nullptr): No data available (-61)
#ifndef APPS_COMMON_CHECK_H_
#define APPS_COMMON_CHECK_H_

#include <sys/types.h>

namespace apps {

// The program's name in messages ("rds_example"); set once from main().
void SetProgramName(const char* argv0);
const char* ProgramName();

// Returns `rc` when it is not negative; otherwise prints `what` and
// fi_strerror(-rc) on stderr and exits 1.
ssize_t Check(ssize_t rc, const char* what);

// Prints the message (printf format) on stderr and exits 1.
[[noreturn]] void Fail(const char* format, ...)
    __attribute__((format(printf, 1, 2)));

// A step of the flow, on stdout ("server: 3. fi_listen") and flushed, so
// the output of a server and a client reads in order.
void Say(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace apps

#define FI_CHECK(call) ::apps::Check((call), #call)

#endif  // APPS_COMMON_CHECK_H_
