// Text that goes into a shell: host names a hosts file or a command may carry as they are,
// and quoting for commands shown to the operator to copy.
#pragma once

#include <string>
#include <string_view>

namespace atracectl {

// True for a name a hosts file and a shell may carry as it is: 1-253 bytes of [A-Za-z0-9._-],
// not starting with '-' (which a fan-out tool would read as an option).
bool SafeHostName(std::string_view host);

// 'text' for a POSIX shell (a ' as '\''), for commands shown to the operator to copy.
std::string ShellQuote(std::string_view text);

}  // namespace atracectl
