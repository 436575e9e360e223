// Text for a Boost.Program_options error, safe for any input.
//
// Boost 1.74's error_with_option_name::what() replaces placeholders such as
// %canonical_option% in a loop that never ends when the text put in contains the placeholder
// itself, so `atraced --%canonical_option%` (or that key in a configuration file) would hang
// the process. The libFuzzer target for the configuration parser found this. These errors
// are therefore described from their type and option name, never through what().
#pragma once

#include <boost/program_options/errors.hpp>
#include <string>

namespace atraced {

inline std::string DescribeOptionError(const boost::program_options::error& e) {
  namespace po = boost::program_options;
  const auto* named = dynamic_cast<const po::error_with_option_name*>(&e);
  if (named == nullptr) return e.what();  // fixed texts, no placeholders
  std::string name = named->get_option_name();
  for (char& c : name) {
    if (c == '%') c = '?';
  }
  const std::string quoted = "'" + name + "'";
  if (dynamic_cast<const po::unknown_option*>(&e)) return "unrecognised option " + quoted;
  if (dynamic_cast<const po::ambiguous_option*>(&e)) return "option " + quoted + " is ambiguous";
  if (dynamic_cast<const po::multiple_occurrences*>(&e)) return "option " + quoted + " cannot be specified more than once";
  if (dynamic_cast<const po::required_option*>(&e)) return "the option " + quoted + " is required but missing";
  if (dynamic_cast<const po::validation_error*>(&e)) return "invalid value for option " + quoted;
  if (const auto* syntax = dynamic_cast<const po::invalid_syntax*>(&e)) {
    switch (syntax->kind()) {
      case po::invalid_syntax::missing_parameter: return "the required argument for option " + quoted + " is missing";
      case po::invalid_syntax::extra_parameter: return "option " + quoted + " does not take any arguments";
      case po::invalid_syntax::unrecognized_line: return "unrecognised line near option " + quoted;
      default: return "invalid syntax for option " + quoted;
    }
  }
  return "invalid option " + quoted;
}

}  // namespace atraced
