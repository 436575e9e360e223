#include "device/hal_driver.h"

#include <dlfcn.h>


namespace ascend_trace::device {

namespace {

struct Loaded {
  HalDriver driver{};
  bool usable = false;
  std::string why;
};

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* out, std::string* why) {
  void* sym = ::dlsym(lib, name);
  if (sym == nullptr) {
    *why = std::string("libascend_hal.so has no ") + name;
    return false;
  }
  *out = reinterpret_cast<Fn>(sym);
  return true;
}

Loaded Load() {
  Loaded l;
  // RTLD_LOCAL: the driver's symbols stay out of the global scope the application sees; the
  // runtime has usually loaded it already and this only takes a reference.
  void* lib = ::dlopen("libascend_hal.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = ::dlerror();
    l.why = std::string("no NPU driver (") + (err != nullptr ? err : "libascend_hal.so not found") + ")";
    return l;
  }
  HalDriver& d = l.driver;
  const bool all = Resolve(lib, "drvGetPlatformInfo", &d.get_platform_info, &l.why) &&
                   Resolve(lib, "drvGetDevNum", &d.get_dev_num, &l.why) &&
                   Resolve(lib, "drvHdcClientCreate", &d.client_create, &l.why) &&
                   Resolve(lib, "drvHdcClientDestroy", &d.client_destroy, &l.why) &&
                   Resolve(lib, "drvHdcSessionConnect", &d.session_connect, &l.why) &&
                   Resolve(lib, "drvHdcSetSessionReference", &d.set_session_reference, &l.why) &&
                   Resolve(lib, "drvHdcSessionClose", &d.session_close, &l.why) &&
                   Resolve(lib, "drvHdcGetCapacity", &d.get_capacity, &l.why) &&
                   Resolve(lib, "drvHdcAllocMsg", &d.alloc_msg, &l.why) &&
                   Resolve(lib, "drvHdcFreeMsg", &d.free_msg, &l.why) &&
                   Resolve(lib, "drvHdcReuseMsg", &d.reuse_msg, &l.why) &&
                   Resolve(lib, "drvHdcAddMsgBuffer", &d.add_msg_buffer, &l.why) &&
                   Resolve(lib, "drvHdcGetMsgBuffer", &d.get_msg_buffer, &l.why) &&
                   Resolve(lib, "halHdcSend", &d.send, &l.why) && Resolve(lib, "halHdcRecv", &d.recv, &l.why);
  // Never dlclose: a library handle costs nothing and a thread may be inside the driver.
  if (!all) return l;
  uint32_t platform = 0;
  if (d.get_platform_info(&platform) != kDrvOk) {
    l.why = "the driver cannot tell the platform";
    return l;
  }
  if (platform != kPlatformHostSide) {
    l.why = "the driver says this is not the host side (platform " + std::to_string(platform) + ")";
    return l;
  }
  uint32_t devices = 0;
  if (d.get_dev_num(&devices) != kDrvOk || devices == 0) {
    l.why = "the driver sees no device";
    return l;
  }
  l.usable = true;
  return l;
}

}  // namespace

const HalDriver* LoadHalDriver(std::string* why) {
  // Never destroyed: the receivers call the driver during the library's exit work, which
  // runs after this file's static destructors when the library was loaded with dlopen.
  static const Loaded* loaded = new Loaded(Load());
  if (!loaded->usable) {
    *why = loaded->why;
    return nullptr;
  }
  return &loaded->driver;
}

}  // namespace ascend_trace::device
