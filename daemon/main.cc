#include "atraced/app/daemon_main.h"

int main(int argc, char** argv) { return atraced::DaemonMain(argc, argv); }
