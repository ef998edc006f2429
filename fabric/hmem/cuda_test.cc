// The CUDA memory interface against the driver this process finds: the
// machine's libcuda.so.1, or none. Without a device the copies must fail
// with -FI_ENOSYS; with one, data must go to device memory and back.
#include <dlfcn.h>
#include <fcntl.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fabric/hmem/cuda_driver.h"
#include "fabric/hmem/hmem_copy.h"
#include "fabric/hmem/memory_interface.h"
#include "gtest/gtest.h"

namespace fabric {
namespace {

using cuda::CUcontext;
using cuda::CUdevice;
using cuda::CUdeviceptr;
using cuda::CUresult;
using cuda::kSuccess;

// The test's own view of the driver, through the library the copier uses.
class TestCuda {
 public:
  static const TestCuda& Get() {
    static const TestCuda* cuda = new TestCuda();
    return *cuda;
  }

  int device_count() const { return device_count_; }

  // Device memory on device 0, freed with the returned pointer.
  std::shared_ptr<void> Alloc(size_t size) const {
    CUdeviceptr ptr = 0;
    InContext([&] { return mem_alloc_(&ptr, size); });
    return std::shared_ptr<void>(reinterpret_cast<void*>(ptr), [this](void* p) {
      mem_free_(reinterpret_cast<CUdeviceptr>(p));
    });
  }

  void ToDevice(void* device_ptr, const std::string& bytes) const {
    InContext([&] {
      return memcpy_htod_(reinterpret_cast<CUdeviceptr>(device_ptr),
                          bytes.data(), bytes.size());
    });
  }

  std::string FromDevice(const void* device_ptr, size_t size) const {
    std::string bytes(size, '\0');
    InContext([&] {
      return memcpy_dtoh_(&bytes[0], reinterpret_cast<CUdeviceptr>(device_ptr),
                          size);
    });
    return bytes;
  }

  CUcontext context() const { return context_; }
  CUcontext Current() const {
    CUcontext current = nullptr;
    EXPECT_EQ(ctx_get_current_(&current), kSuccess);
    return current;
  }
  CUresult Push(CUcontext context) const { return ctx_push_(context); }
  CUresult Pop() const {
    CUcontext popped;
    return ctx_pop_(&popped);
  }

 private:
  TestCuda() {
    void* library = dlopen("libcuda.so.1", RTLD_NOW);
    if (library == nullptr) return;
    auto resolve = [library](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
          dlsym(library, name));
      return function != nullptr;
    };
    CUresult (*init)(unsigned int);
    CUresult (*device_get_count)(int*);
    CUresult (*device_get)(CUdevice*, int);
    CUresult (*primary_ctx_retain)(CUcontext*, CUdevice);
    if (!resolve(init, "cuInit") ||
        !resolve(device_get_count, "cuDeviceGetCount") ||
        !resolve(device_get, "cuDeviceGet") ||
        !resolve(primary_ctx_retain, "cuDevicePrimaryCtxRetain") ||
        !resolve(ctx_push_, "cuCtxPushCurrent_v2") ||
        !resolve(ctx_pop_, "cuCtxPopCurrent_v2") ||
        !resolve(ctx_get_current_, "cuCtxGetCurrent") ||
        !resolve(mem_alloc_, "cuMemAlloc_v2") ||
        !resolve(mem_free_, "cuMemFree_v2") ||
        !resolve(memcpy_htod_, "cuMemcpyHtoD_v2") ||
        !resolve(memcpy_dtoh_, "cuMemcpyDtoH_v2")) {
      return;
    }
    int count = 0;
    CUdevice device;
    if (init(0) != kSuccess || device_get_count(&count) != kSuccess ||
        count < 1 || device_get(&device, 0) != kSuccess ||
        primary_ctx_retain(&context_, device) != kSuccess) {
      return;
    }
    device_count_ = count;
  }

  // Runs a driver call with device 0's primary context current.
  void InContext(const std::function<CUresult()>& call) const {
    ASSERT_EQ(Push(context_), kSuccess);
    EXPECT_EQ(call(), kSuccess);
    EXPECT_EQ(Pop(), kSuccess);
  }

  int device_count_ = 0;
  CUcontext context_ = nullptr;
  CUresult (*ctx_push_)(CUcontext) = nullptr;
  CUresult (*ctx_pop_)(CUcontext*) = nullptr;
  CUresult (*ctx_get_current_)(CUcontext*) = nullptr;
  CUresult (*mem_alloc_)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free_)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod_)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh_)(void*, CUdeviceptr, size_t) = nullptr;
};

#define SKIP_WITHOUT_DEVICE()                                          \
  if (TestCuda::Get().device_count() == 0) {                           \
    GTEST_SKIP() << "no CUDA device: the copies' failure is tested in " \
                    "CopiesWithoutDeviceFailWithOneWarning";           \
  }

// Everything written to stderr while `body` runs.
std::string StderrOf(const std::function<void()>& body) {
  std::string path = absl::StrCat(getenv("TEST_TMPDIR"), "/stderr.txt");
  fflush(stderr);
  int file = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  int saved = dup(STDERR_FILENO);
  dup2(file, STDERR_FILENO);
  close(file);
  body();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CudaTest, AvailableExactlyWhenTheDriverHasADevice) {
  const TestCuda& cuda = TestCuda::Get();
  EXPECT_EQ(HmemIfaceAvailable(FI_HMEM_CUDA), cuda.device_count() > 0);
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  ASSERT_EQ(driver.ok(), cuda.device_count() > 0) << driver.status();
  if (driver.ok()) {
    EXPECT_EQ((*driver)->device_count(), cuda.device_count());
  }
}

// Must be the process's first CUDA copy: the warning is logged once.
TEST(CudaTest, CopiesWithoutDeviceFailWithOneWarning) {
  if (TestCuda::Get().device_count() > 0) GTEST_SKIP() << "a device exists";
  HmemCopier copier;
  char host[8] = {};
  struct iovec iov = {host, sizeof(host)};
  std::string log = StderrOf([&] {
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(copier.CopyFromIov(host, sizeof(host), FI_HMEM_CUDA, 0, &iov,
                                   1, 0),
                -FI_ENOSYS);
      EXPECT_EQ(copier.CopyToIov(FI_HMEM_CUDA, 0, &iov, 1, 0, host,
                                 sizeof(host)),
                -FI_ENOSYS);
    }
  });
  std::vector<std::string> lines =
      absl::StrSplit(log, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u) << log;
  EXPECT_NE(lines[0].find("<warn>"), std::string::npos) << log;
  EXPECT_NE(lines[0].find("cannot copy CUDA memory"), std::string::npos)
      << log;
}

TEST(CudaTest, RoundTripThroughDeviceMemory) {
  SKIP_WITHOUT_DEVICE();
  const TestCuda& cuda = TestCuda::Get();
  std::shared_ptr<void> first = cuda.Alloc(24);
  std::shared_ptr<void> second = cuda.Alloc(40);
  cuda.ToDevice(first.get(), std::string(24, 'a'));
  cuda.ToDevice(second.get(), std::string(40, 'b'));
  struct iovec iov[2] = {{first.get(), 24}, {second.get(), 40}};
  std::string src;
  for (int i = 0; i < 50; ++i) src += static_cast<char>('0' + i);

  HmemCopier copier;
  // From 10 bytes into the first buffer to 36 bytes into the second.
  ASSERT_EQ(copier.CopyToIov(FI_HMEM_CUDA, 0, iov, 2, 10, src.data(),
                             src.size()),
            50);
  std::string expected = std::string(24, 'a') + std::string(40, 'b');
  expected.replace(10, 50, src);
  EXPECT_EQ(cuda.FromDevice(first.get(), 24) +
                cuda.FromDevice(second.get(), 40),
            expected);

  std::string back(80, '\0');
  ASSERT_EQ(copier.CopyFromIov(&back[0], back.size(), FI_HMEM_CUDA, 0, iov, 2,
                               5),
            59);
  EXPECT_EQ(back.substr(0, 59), expected.substr(5));
}

TEST(CudaTest, RoundTripsFromFourThreads) {
  SKIP_WITHOUT_DEVICE();
  const TestCuda& cuda = TestCuda::Get();
  HmemCopier copier;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cuda, &copier, t] {
      std::shared_ptr<void> device_buffer = cuda.Alloc(256);
      struct iovec iov = {device_buffer.get(), 256};
      for (int i = 0; i < 50; ++i) {
        std::string out(256, static_cast<char>(t * 50 + i));
        std::string in(256, '\0');
        ASSERT_EQ(copier.CopyToIov(FI_HMEM_CUDA, 0, &iov, 1, 0, out.data(),
                                   out.size()),
                  256);
        ASSERT_EQ(copier.CopyFromIov(&in[0], in.size(), FI_HMEM_CUDA, 0, &iov,
                                     1, 0),
                  256);
        ASSERT_EQ(in, out);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST(CudaTest, CopyLeavesTheCallersContextCurrent) {
  SKIP_WITHOUT_DEVICE();
  const TestCuda& cuda = TestCuda::Get();
  std::shared_ptr<void> device_buffer = cuda.Alloc(16);
  struct iovec iov = {device_buffer.get(), 16};
  char host[16] = {};
  HmemCopier copier;
  // A thread with no context keeps none.
  std::thread([&] {
    EXPECT_EQ(copier.CopyToIov(FI_HMEM_CUDA, 0, &iov, 1, 0, host, 16), 16);
    EXPECT_EQ(cuda.Current(), nullptr);
  }).join();
  // A thread with one keeps it.
  ASSERT_EQ(cuda.Push(cuda.context()), kSuccess);
  EXPECT_EQ(copier.CopyFromIov(host, 16, FI_HMEM_CUDA, 0, &iov, 1, 0), 16);
  EXPECT_EQ(cuda.Current(), cuda.context());
  EXPECT_EQ(cuda.Pop(), kSuccess);
}

TEST(CudaTest, RejectsDeviceThatDoesNotExist) {
  SKIP_WITHOUT_DEVICE();
  const TestCuda& cuda = TestCuda::Get();
  std::shared_ptr<void> device_buffer = cuda.Alloc(16);
  struct iovec iov = {device_buffer.get(), 16};
  char host[16] = {};
  HmemCopier copier;
  EXPECT_EQ(copier.CopyToIov(FI_HMEM_CUDA, cuda.device_count(), &iov, 1, 0,
                             host, 16),
            -FI_EINVAL);
  EXPECT_EQ(copier.CopyFromIov(host, 16, FI_HMEM_CUDA, UINT64_MAX, &iov, 1, 0),
            -FI_EINVAL);
}

TEST(CudaTest, TellsDeviceMemoryFromHostMemory) {
  SKIP_WITHOUT_DEVICE();
  std::shared_ptr<void> device_buffer = TestCuda::Get().Alloc(64);
  EXPECT_EQ(HmemIfaceOf(device_buffer.get()), FI_HMEM_CUDA);
  EXPECT_EQ(HmemIfaceOf(static_cast<char*>(device_buffer.get()) + 63),
            FI_HMEM_CUDA);
  std::string host(64, 'h');
  EXPECT_EQ(HmemIfaceOf(host.data()), FI_HMEM_SYSTEM);
}

}  // namespace
}  // namespace fabric
