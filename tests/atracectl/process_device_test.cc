// dump --devices's reading of a process's environment (host/process_device.h): which device
// and rank it names, and why none where the bytes do not name one plainly.
#include <catch2/catch.hpp>

#include <string>

#include "host/process_device.h"

using atracectl::DeviceFromEnvironment;

namespace {

std::string Env(std::initializer_list<std::string> entries) {
  std::string out;
  for (const auto& e : entries) out += e + '\0';
  return out;
}

}  // namespace

TEST_CASE("process device: DEVICE_ID before ASCEND_DEVICE_ID before LOCAL_RANK, RANK_ID before RANK") {
  auto d = DeviceFromEnvironment(Env({"LOCAL_RANK=7", "ASCEND_DEVICE_ID=6", "DEVICE_ID=5", "RANK=1", "RANK_ID=9"}));
  CHECK(d.device == 5u);
  CHECK(d.source == "DEVICE_ID 5");
  CHECK(d.rank == 9);
  d = DeviceFromEnvironment(Env({"LOCAL_RANK=7", "ASCEND_DEVICE_ID=6", "RANK=1"}));
  CHECK(d.device == 6u);
  CHECK(d.rank == 1);
  d = DeviceFromEnvironment(Env({"LOCAL_RANK=7"}));
  CHECK(d.device == 7u);
  CHECK(d.source == "LOCAL_RANK 7");
  CHECK_FALSE(d.rank);
  // getenv's answer: the first entry of a name.
  CHECK(DeviceFromEnvironment(Env({"DEVICE_ID=1", "DEVICE_ID=2"})).device == 1u);
}

TEST_CASE("process device: ASCEND_RT_VISIBLE_DEVICES maps the logical device to the physical one") {
  auto d = DeviceFromEnvironment(Env({"DEVICE_ID=2", "ASCEND_RT_VISIBLE_DEVICES=4,5,7"}));
  CHECK(d.device == 7u);
  CHECK(d.source == "DEVICE_ID 2 through ASCEND_RT_VISIBLE_DEVICES 4,5,7");
  d = DeviceFromEnvironment(Env({"DEVICE_ID=3", "ASCEND_RT_VISIBLE_DEVICES=4,5,7"}));
  CHECK_FALSE(d.device);
  CHECK(d.unknown == "DEVICE_ID 3 is not in ASCEND_RT_VISIBLE_DEVICES '4,5,7'");
  d = DeviceFromEnvironment(Env({"DEVICE_ID=1", "ASCEND_RT_VISIBLE_DEVICES=4,x"}));
  CHECK_FALSE(d.device);
  CHECK(d.source.empty());
}

TEST_CASE("process device: a value that is not a plain device number names no device, and says so bounded") {
  for (const char* bad : {"DEVICE_ID=", "DEVICE_ID=-1", "DEVICE_ID= 1", "DEVICE_ID=1 -cfg x", "DEVICE_ID=0x1",
                          "DEVICE_ID=1234567890"}) {
    const auto d = DeviceFromEnvironment(Env({bad}));
    INFO(bad);
    CHECK_FALSE(d.device);
    CHECK(d.unknown.rfind("DEVICE_ID is not a device number: '", 0) == 0);
  }
  const auto past = DeviceFromEnvironment(Env({"DEVICE_ID=1024"}));
  CHECK_FALSE(past.device);
  CHECK(past.unknown == "device 1024 is past 1023");
  CHECK(DeviceFromEnvironment(Env({"DEVICE_ID=1023"})).device == 1023u);
  const auto long_value = DeviceFromEnvironment(Env({"DEVICE_ID=" + std::string(100000, 'x')}));
  CHECK(long_value.unknown.size() < 128);
  const auto none = DeviceFromEnvironment(Env({"PATH=/bin", "RANK_ID=x", "novalue"}));
  CHECK(none.unknown == "no DEVICE_ID, ASCEND_DEVICE_ID or LOCAL_RANK in its environment");
  CHECK_FALSE(none.rank);
}
