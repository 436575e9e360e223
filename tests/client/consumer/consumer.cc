// Emits one event through the installed C++ wrapper. Usage: consumer SOCKET OBJECT
#include <atraced/atrace_client.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  atrace::Client::Options options;
  options.socket_path = argv[1];
  std::error_code ec;
  atrace::Client client = atrace::Client::Open(options, ec);
  if (ec) {
    std::fprintf(stderr, "open: %s\n", ec.message().c_str());
    return 1;
  }
  std::string path;
  ec = client.Emit(atrace::EventSpec{}, atrace::FileSpec::Object(argv[2]), "from the consumer\n", &path);
  if (ec) {
    std::fprintf(stderr, "emit: %s\n", ec.message().c_str());
    return 1;
  }
  std::printf("%s\n", path.c_str());
  return 0;
}
