// File: fabric/api/text/text_testing.h
//
// For the text tests: Debian's libfabric 1.17 loaded beside ours (dlopen),
// fi_tostr_r of either into a buffer of a given length, and a fixture that
// compares the two, text and buffer bytes, at every length.
#ifndef FABRIC_API_TEXT_TEXT_TESTING_H_
#define FABRIC_API_TEXT_TEXT_TESTING_H_

#include <dlfcn.h>
#include <rdma/fabric.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace text_testing {

inline constexpr char kDebianLibrary[] =
    "/usr/lib/x86_64-linux-gnu/libfabric.so.1";

// The sanitizers refuse RTLD_DEEPBIND. Without it, Debian's fi_tostr may
// call our fi_tostr_r when ours is in a shared object (Bazel links tests
// dynamically); Debian's fi_tostr_r, called through dlsym, is unaffected.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL;
#else
inline constexpr int kDlopenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

// Larger than any text in these tests.
inline constexpr size_t kLargeBuffer = 1 << 16;

// fi_tostr_r with the type as the int it is in C, so that tests can pass
// types the enum has no value for.
using TostrR = char* (*)(char*, size_t, const void*, int);

struct Debian {
  TostrR tostr_r;
  decltype(&fi_tostr) tostr;
  decltype(&fi_strerror) strerror;
  decltype(&fi_getinfo) getinfo;
  decltype(&fi_freeinfo) freeinfo;
};

class TextTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FI_PROVIDER", "tcp", 1);
    handle_ = dlopen(kDebianLibrary, kDlopenFlags);
    if (handle_ == nullptr) return;
    debian_.tostr_r = Symbol<TostrR>("fi_tostr_r");
    debian_.tostr = Symbol<decltype(&fi_tostr)>("fi_tostr");
    debian_.strerror = Symbol<decltype(&fi_strerror)>("fi_strerror");
    debian_.getinfo = Symbol<decltype(&fi_getinfo)>("fi_getinfo");
    debian_.freeinfo = Symbol<decltype(&fi_freeinfo)>("fi_freeinfo");
  }

  void SetUp() override {
    ASSERT_NE(handle_, nullptr) << dlerror();
    ASSERT_NE(debian_.tostr_r, nullptr);
    ASSERT_NE(debian_.tostr, nullptr);
    ASSERT_NE(debian_.strerror, nullptr);
    ASSERT_NE(debian_.getinfo, nullptr);
    ASSERT_NE(debian_.freeinfo, nullptr);
  }

  template <typename F>
  static F Symbol(const char* name) {
    return reinterpret_cast<F>(dlsym(handle_, name));
  }

  inline static void* handle_ = nullptr;
  inline static Debian debian_ = {};
};

// The whole buffer after a call with a buffer of len bytes, prefilled with a
// pattern; "(returned NULL)" when the call returned NULL.
inline std::string Call(TostrR tostr_r, size_t len, const void* data,
                        int type) {
  std::vector<char> buf(len + 1, '#');
  char* text = tostr_r(buf.data(), len, data, type);
  if (text == nullptr) return "(returned NULL)";
  EXPECT_EQ(text, buf.data());
  return std::string(buf.data(), len);
}

inline const TostrR kOurTostrR = reinterpret_cast<TostrR>(&fi_tostr_r);

inline std::string Ours(const void* data, int type, size_t len = kLargeBuffer) {
  std::string bytes = Call(kOurTostrR, len, data, type);
  return bytes.substr(0, strnlen(bytes.c_str(), len));
}

class CompareTest : public TextTest {
 protected:
  std::string Theirs(const void* data, int type) {
    std::string bytes = Call(debian_.tostr_r, kLargeBuffer, data, type);
    return bytes.substr(0, strnlen(bytes.c_str(), kLargeBuffer));
  }

  // Same text at full length, and same buffer bytes at every length up to
  // and past it.
  void ExpectSame(const void* data, int type) {
    std::string full = Theirs(data, type);
    ASSERT_EQ(Ours(data, type), full) << "type " << type;
    for (size_t len = 0; len <= full.size() + 2; ++len) {
      ASSERT_EQ(Call(kOurTostrR, len, data, type),
                Call(debian_.tostr_r, len, data, type))
          << "type " << type << ", buffer of " << len << " bytes, full text:\n"
          << full;
    }
  }

  // An int-sized enum value with garbage above it, so that reading more than
  // the value would show.
  void ExpectSameEnum(int64_t value, int type) {
    uint64_t data = 0xa5a5a5a500000000ULL | static_cast<uint32_t>(value);
    ExpectSame(&data, type);
  }
};

// A tostr op that shows what it was given: the room and the text before it.
inline int ShowArgumentsTostr(const struct fid* fid, char* buf, size_t len) {
  size_t used = strnlen(buf, len);
  snprintf(buf + used, len - used, "<fid %zu, room %zu, text %zu>\n",
           fid->fclass, len, used);
  return 0;
}

inline fi_ops Ops(size_t size, int (*tostr)(const struct fid*, char*, size_t)) {
  fi_ops ops = {};
  ops.size = size;
  ops.tostr = tostr;
  return ops;
}

struct Fids {
  fi_ops with_tostr = Ops(sizeof(fi_ops), ShowArgumentsTostr);
  fi_ops too_small = Ops(offsetof(fi_ops, tostr), ShowArgumentsTostr);
  fi_ops null_tostr = Ops(sizeof(fi_ops), nullptr);
};

}  // namespace text_testing

#endif  // FABRIC_API_TEXT_TEXT_TESTING_H_
