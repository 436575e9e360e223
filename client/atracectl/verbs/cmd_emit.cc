// atracectl emit: one event with one object file, content from FILE or stdin.
#include <errno.h>
#include <string.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "atraced/base/name_rule.h"
#include "atraced/proto/wire.h"
#include "common/command_line.h"
#include "daemon_talk/connect.h"
#include "verbs/verbs.h"

namespace po = boost::program_options;

namespace atracectl {

namespace {

constexpr const char* kEmitUsage =
    "Usage: atracectl [--socket PATH] emit --event schedule|stackcore|exit --object NAME\n"
    "                 [--device ID [--time YYYYMMDDhhmmssmmmuuu]] [--bin] [FILE]\n"
    "Writes one event with one file (schedule_tracer_NAME.txt, or .bin) from FILE, or from\n"
    "stdin without FILE, and prints the created file's path.";

bool ParseKind(const std::string& s, int* kind) {
  if (s == "schedule") *kind = ATRACE_EVENT_SCHEDULE;
  else if (s == "stackcore") *kind = ATRACE_EVENT_STACKCORE;
  else if (s == "exit") *kind = ATRACE_EVENT_EXIT;
  else return false;
  return true;
}

bool IsTime(const std::string& s) {
  if (s.size() != 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool ReadAll(std::istream& in, std::string* out) {
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return !in.bad();
}

}  // namespace

int RunEmit(const Globals& g, const Args& args) {
  po::options_description options("emit options");
  options.add_options()
      ("event", po::value<std::string>()->required(), "schedule, stackcore or exit")
      ("object", po::value<std::string>()->required(), "object name: 1..31 of [A-Za-z0-9_.-]")
      ("device", po::value<uint32_t>(), "device id (0..1023): makes a device event")
      ("bin", po::bool_switch(), "write schedule_tracer_NAME.bin instead of .txt")
      ("time", po::value<std::string>(), "device event time, 20 digits (needs --device)")
      ("file", po::value<std::string>(), "content file (default: stdin)");
  po::positional_options_description positional;
  positional.add("file", 1);
  int exit_code = kExitOk;
  auto vm = ParseCommand(args, kEmitUsage, options, positional, &exit_code);
  if (!vm) return exit_code;

  atrace::EventSpec event;
  if (!ParseKind((*vm)["event"].as<std::string>(), &event.kind)) {
    return UsageError("--event must be schedule, stackcore or exit");
  }
  // Everything that can be checked here is, before anything is sent: a refused event must not
  // reach the daemon at all (issue 23), and a bad argument is a usage error (exit 2).
  if (vm->count("device")) {
    event.side = ATRACE_SIDE_DEVICE;
    event.device_id = (*vm)["device"].as<uint32_t>();
    if (event.device_id > ATR_MAX_DEVICE_ID) {
      return UsageError("--device " + std::to_string(event.device_id) + " is out of range: device ids are 0.." +
                        std::to_string(ATR_MAX_DEVICE_ID));
    }
  }
  if (vm->count("time")) {
    if (!vm->count("device")) return UsageError("--time is only allowed with --device");
    event.time = (*vm)["time"].as<std::string>();
    if (!IsTime(event.time)) return UsageError("--time must be 20 digits YYYYMMDDhhmmssmmmuuu");
  }
  const std::string object = (*vm)["object"].as<std::string>();
  std::string why;
  if (!atraced::IsSafeName(object, &why)) {
    return UsageError("--object '" + object + "' is not a name CANN's layout allows: " + why +
                      " (letters, digits, '_', '.' and '-')");
  }
  if (object.size() > ATR_MAX_OBJECT_NAME) {
    return UsageError("--object is " + std::to_string(object.size()) + " bytes long; at most " +
                      std::to_string(ATR_MAX_OBJECT_NAME));
  }
  atrace::FileSpec file = atrace::FileSpec::Object(object, (*vm)["bin"].as<bool>());

  std::string content;
  if (vm->count("file")) {
    std::string path = (*vm)["file"].as<std::string>();
    std::ifstream in(path, std::ios::binary);
    if (!in) return UsageError("cannot read '" + path + "': " + strerror(errno));
    if (!ReadAll(in, &content)) return UsageError("cannot read '" + path + "': read error");
  } else if (!ReadAll(std::cin, &content)) {
    return UsageError("cannot read stdin");
  }

  atrace::Client client = Connect(g);
  if (!client) return kExitFailed;
  std::string created;
  if (auto ec = client.Emit(event, file, content, &created)) return Fail(client, "emit refused", ec);
  std::cout << created << "\n";
  return kExitOk;
}

}  // namespace atracectl
