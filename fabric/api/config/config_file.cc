#include "fabric/api/config/config_file.h"

#include <errno.h>
#include <fcntl.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/api/config/config.pb.h"
#include "fabric/api/config/enum_names.h"
#include "fabric/api/config/name_filter.h"
#include "fabric/api/config/param_names.h"

namespace fabric {
namespace {

namespace pb = google::protobuf;
using ParseInfoTree = pb::TextFormat::ParseInfoTree;
using ParseLocation = pb::TextFormat::ParseLocation;

// Collects the parser's errors and warnings as "file:line:column: message".
class ErrorList : public pb::io::ErrorCollector {
 public:
  ErrorList(const std::string& path, std::vector<std::string>* errors)
      : path_(path), errors_(errors) {}

  void AddError(int line, pb::io::ColumnNumber column,
                const std::string& message) override {
    errors_->push_back(
        absl::StrFormat("%s:%d:%d: %s", path_, line + 1, column + 1, message));
  }

  // The parser's warnings are things it would otherwise let pass.
  void AddWarning(int line, pb::io::ColumnNumber column,
                  const std::string& message) override {
    AddError(line, column, message);
  }

 private:
  const std::string& path_;
  std::vector<std::string>* errors_;
};

// Where the fields of one parsed message were written.
class Locator {
 public:
  Locator(const std::string& path, const ParseInfoTree* tree,
          const pb::Descriptor* descriptor, ParseLocation self)
      : path_(path), tree_(tree), descriptor_(descriptor), self_(self) {}

  // "file:line:column" of `field` (entry `index` of a repeated field), or of
  // this message when the field was not written.
  std::string Where(absl::string_view field, int index = -1) const {
    ParseLocation at = Find(field, index);
    return absl::StrFormat("%s:%d:%d", path_, at.line + 1, at.column + 1);
  }

  // "file:line" of `field`.
  std::string Line(absl::string_view field, int index = -1) const {
    return absl::StrFormat("%s:%d", path_, Find(field, index).line + 1);
  }

  // The locator of message field `field`.
  Locator Nested(absl::string_view field, int index = -1) const {
    const pb::FieldDescriptor* descriptor = Field(field);
    const ParseInfoTree* nested =
        tree_ == nullptr ? nullptr : tree_->GetTreeForNested(descriptor, index);
    return Locator(path_, nested, descriptor->message_type(),
                   Find(field, index));
  }

 private:
  const pb::FieldDescriptor* Field(absl::string_view field) const {
    return descriptor_->FindFieldByName(std::string(field));
  }

  ParseLocation Find(absl::string_view field, int index) const {
    if (tree_ == nullptr) return self_;
    ParseLocation at = tree_->GetLocation(Field(field), index);
    return at.line < 0 ? self_ : at;
  }

  const std::string& path_;
  const ParseInfoTree* tree_;
  const pb::Descriptor* descriptor_;
  ParseLocation self_;
};

// Letters, digits and '_': what a provider or parameter name may hold, so
// that it makes a valid environment variable name.
bool IsName(absl::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

// Turns a parsed Config into the settings of a ConfigFile, checking each.
class SettingsBuilder {
 public:
  explicit SettingsBuilder(ConfigFile* file) : file_(*file) {}

  void AddConfig(const config::Config& config, const Locator& at) {
    if (config.has_enabled_providers()) {
      AddProviderList(config.enabled_providers(), at, "enabled_providers");
      Set(ParamEnvName(kCoreProviderName, kProviderParam),
          config.enabled_providers(), at, "enabled_providers");
    }
    if (config.has_logging())
      AddLogging(config.logging(), at.Nested("logging"));
    if (config.has_mr_cache())
      AddMrCache(config.mr_cache(), at.Nested("mr_cache"));
    for (int i = 0; i < config.provider_size(); ++i) {
      AddProvider(config.provider(i), at.Nested("provider", i));
    }
  }

 private:
  void AddLogging(const config::Logging& logging, const Locator& at) {
    if (logging.has_level()) {
      if (!ParseLogLevel(logging.level()).has_value()) {
        Error(at.Where("level"),
              absl::StrCat("logging.level: unknown level '", logging.level(),
                           "' (expected warn, trace, info or debug)"));
      }
      Set(ParamEnvName(kCoreProviderName, kLogLevelParam), logging.level(), at,
          "level");
    }
    if (logging.has_providers()) {
      AddProviderList(logging.providers(), at, "providers");
      Set(ParamEnvName(kCoreProviderName, kLogProvParam), logging.providers(),
          at, "providers");
    }
    if (logging.has_subsystems()) {
      NameFilter subsystems = NameFilter::Parse(logging.subsystems());
      for (const std::string& name : subsystems.names()) {
        if (!ParseLogSubsys(name).has_value()) {
          Error(at.Where("subsystems"),
                absl::StrCat("logging.subsystems: unknown subsystem '", name,
                             "' (expected core, fabric, domain, ep_ctrl, "
                             "ep_data, av, cq, eq, mr or cntr)"));
        }
      }
      Set(ParamEnvName(kCoreProviderName, kLogSubsysParam),
          logging.subsystems(), at, "subsystems");
    }
    if (logging.has_interval_ms()) {
      if (logging.interval_ms() < 0) {
        Error(at.Where("interval_ms"), "logging.interval_ms: negative");
      }
      Set(ParamEnvName(kCoreProviderName, kLogIntervalParam),
          absl::StrCat(logging.interval_ms()), at, "interval_ms");
    }
  }

  void AddMrCache(const config::MrCache& cache, const Locator& at) {
    if (cache.has_max_size()) {
      Set(ParamEnvName(kCoreProviderName, kMrCacheMaxSizeParam),
          absl::StrCat(cache.max_size()), at, "max_size");
    }
    if (cache.has_max_count()) {
      Set(ParamEnvName(kCoreProviderName, kMrCacheMaxCountParam),
          absl::StrCat(cache.max_count()), at, "max_count");
    }
    if (cache.has_monitor()) {
      if (cache.monitor() != "userfaultfd" && cache.monitor() != "disabled") {
        Error(at.Where("monitor"),
              absl::StrCat("mr_cache.monitor: unknown monitor '",
                           cache.monitor(),
                           "' (expected userfaultfd or disabled)"));
      }
      Set(ParamEnvName(kCoreProviderName, kMrCacheMonitorParam),
          cache.monitor(), at, "monitor");
    }
  }

  // A list in NameFilter grammar of provider names.
  void AddProviderList(const std::string& list, const Locator& at,
                       absl::string_view field) {
    NameFilter names = NameFilter::Parse(list);
    for (const std::string& name : names.names()) {
      if (!IsName(name)) {
        Error(at.Where(field), absl::StrCat(field, ": '", name, "' in \"", list,
                                            "\" is not a provider name"));
        continue;
      }
      file_.provider_names.push_back({name, at.Where(field)});
    }
  }

  void AddProvider(const config::Provider& provider, const Locator& at) {
    const std::string& name = provider.name();
    if (!IsName(name) || absl::EqualsIgnoreCase(name, kCoreProviderName)) {
      Error(at.Where("name"), name.empty()
                                  ? std::string("provider: name is required")
                                  : absl::StrCat("provider: '", name,
                                                 "' is not a provider name"));
      return;
    }
    auto [first, inserted] = provider_seen_at_.emplace(
        absl::AsciiStrToLower(name), at.Where("name"));
    if (!inserted) {
      Error(at.Where("name"),
            absl::StrCat("provider '", name, "' is configured twice (first at ",
                         first->second, ")"));
      return;
    }
    file_.provider_names.push_back({name, at.Where("name")});
    if (provider.has_priority()) {
      Set(ParamEnvName(name, kPriorityParam), absl::StrCat(provider.priority()),
          at, "priority");
    }
    for (int i = 0; i < provider.param_size(); ++i) {
      AddParam(name, provider.param(i), at.Nested("param", i));
    }
    if (provider.has_attrs())
      AddAttrs(name, provider.attrs(), at.Nested("attrs"));
  }

  void AddParam(const std::string& provider, const config::Param& param,
                const Locator& at) {
    const std::string& name = param.name();
    if (!IsName(name)) {
      Error(at.Where("name"),
            name.empty() ? absl::StrCat("provider '", provider,
                                        "': param: name is required")
                         : absl::StrCat("provider '", provider, "': '", name,
                                        "' is not a parameter name"));
      return;
    }
    if (IsReservedProviderParam(name)) {
      Error(at.Where("name"),
            absl::StrCat("provider '", provider, "': '", name,
                         "' is set with the provider's priority and attrs "
                         "fields, not as a param"));
      return;
    }
    std::string env_name = ParamEnvName(provider, name);
    file_.provider_params.push_back(
        {provider, name, env_name, at.Where("name"), at.Where("value")});
    Set(env_name, param.value(), at, "value");
  }

  void AddAttrs(const std::string& provider, const config::AttrOverrides& attrs,
                const Locator& at) {
    if (attrs.has_tx_size()) {
      Set(ParamEnvName(provider, kAttrTxSizeParam),
          absl::StrCat(attrs.tx_size()), at, "tx_size");
    }
    if (attrs.has_rx_size()) {
      Set(ParamEnvName(provider, kAttrRxSizeParam),
          absl::StrCat(attrs.rx_size()), at, "rx_size");
    }
    if (attrs.has_max_msg_size()) {
      Set(ParamEnvName(provider, kAttrMaxMsgSizeParam),
          absl::StrCat(attrs.max_msg_size()), at, "max_msg_size");
    }
    if (attrs.has_inject_size()) {
      Set(ParamEnvName(provider, kAttrInjectSizeParam),
          absl::StrCat(attrs.inject_size()), at, "inject_size");
    }
    if (attrs.has_threading()) {
      if (!ParseThreading(attrs.threading()).has_value()) {
        Error(at.Where("threading"),
              absl::StrCat("attrs.threading: unknown threading model '",
                           attrs.threading(),
                           "' (expected FI_THREAD_SAFE, FI_THREAD_FID, "
                           "FI_THREAD_DOMAIN, FI_THREAD_COMPLETION or "
                           "FI_THREAD_ENDPOINT)"));
      }
      Set(ParamEnvName(provider, kAttrThreadingParam), attrs.threading(), at,
          "threading");
    }
    AddProgress(provider, attrs.has_control_progress(),
                attrs.control_progress(), kAttrControlProgressParam, at,
                "control_progress");
    AddProgress(provider, attrs.has_data_progress(), attrs.data_progress(),
                kAttrDataProgressParam, at, "data_progress");
  }

  void AddProgress(const std::string& provider, bool has_value,
                   const std::string& value, const char* param,
                   const Locator& at, absl::string_view field) {
    if (!has_value) return;
    if (!ParseProgress(value).has_value()) {
      Error(
          at.Where(field),
          absl::StrCat("attrs.", field, ": unknown progress model '", value,
                       "' (expected FI_PROGRESS_AUTO or FI_PROGRESS_MANUAL)"));
    }
    Set(ParamEnvName(provider, param), value, at, field);
  }

  // Records that the file sets `env_name` to `value` in `field` of the
  // message at `at`.
  void Set(const std::string& env_name, std::string value, const Locator& at,
           absl::string_view field) {
    auto [setting, inserted] =
        file_.settings.emplace(env_name, FileSetting{value, at.Line(field)});
    if (!inserted) {
      Error(at.Where(field),
            absl::StrCat("sets ", env_name, " a second time (first at ",
                         setting->second.where, ")"));
    }
  }

  void Error(const std::string& where, absl::string_view message) {
    file_.errors.push_back(absl::StrCat(where, ": ", message));
  }

  ConfigFile& file_;
  // Where each provider (by lower-case name) was configured first.
  std::map<std::string, std::string> provider_seen_at_;
};

}  // namespace

ConfigFile ParseConfigText(absl::string_view text, const std::string& path) {
  ConfigFile file;
  file.path = path;
  config::Config config;
  ParseInfoTree tree;
  ErrorList errors(path, &file.errors);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  bool parsed = parser.ParseFromString(std::string(text), &config);
  if (parsed && file.errors.empty()) {
    SettingsBuilder(&file).AddConfig(
        config, Locator(path, &tree, config::Config::descriptor(),
                        ParseLocation(0, 0)));
  } else if (file.errors.empty()) {
    file.errors.push_back(absl::StrCat(path, ": not a fabric.config.Config"));
  }
  if (!file.errors.empty()) {
    file.settings.clear();
    file.provider_names.clear();
    file.provider_params.clear();
  }
  return file;
}

ConfigFile ReadConfigFile(const std::string& path, bool must_exist) {
  auto failed = [&path](absl::string_view what) {
    ConfigFile file;
    file.path = path;
    file.errors.push_back(absl::StrCat(path, ": ", what));
    return file;
  };
  // Non-blocking: opening a FIFO must not wait for a writer.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT && !must_exist) return ConfigFile();
    return failed(absl::StrCat("cannot open config file: ", strerror(error)));
  }
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { close(*f); });
  struct stat info;
  if (fstat(fd, &info) != 0) {
    return failed(absl::StrCat("cannot read config file: ", strerror(errno)));
  }
  if (S_ISDIR(info.st_mode)) {
    return failed("cannot read config file: Is a directory");
  }
  // A device (/dev/zero), a pipe or a socket may never end.
  if (!S_ISREG(info.st_mode)) {
    return failed("not a regular file: a config file is read from a file");
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxConfigFileBytes) {
    return failed(absl::StrCat("config file of ", info.st_size,
                               " bytes: more than the ", kMaxConfigFileBytes,
                               " read"));
  }
  std::string text;
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return failed(
          absl::StrCat("cannot read config file: ", strerror(errno)));
    }
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxConfigFileBytes) {  // grew while read
      return failed(absl::StrCat("config file of more than ",
                                 kMaxConfigFileBytes, " bytes"));
    }
  }
  return ParseConfigText(text, path);
}

}  // namespace fabric
