#pragma once
// What a command line says to a mistyped command: the commands there are, not CLI11's "The following
// argument was not expected". Header-only (CLI11 is), shared by qimctl and qim.

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace qim::ctl {

// Follows argv's leading words down `app`'s subcommands. If one names no subcommand where a subcommand is
// required, returns "<program> [<parents>]: unknown command '<word>'; the commands are: a, b, c (<program>
// --help)\n"; otherwise (the words name commands, an option comes first, nothing is required) nullopt.
inline std::optional<std::string> unknown_command(const CLI::App& app, std::string_view program, int argc,
                                                  const char* const* argv) {
  const CLI::App* at = &app;
  std::string path(program);
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.empty() || word.starts_with('-')) return std::nullopt;
    auto subs = at->get_subcommands([](const CLI::App*) { return true; });
    if (subs.empty()) return std::nullopt;
    const CLI::App* next = nullptr;
    for (const CLI::App* s : subs)
      if (s->check_name(std::string(word))) next = s;
    if (next == nullptr) {
      if (at->get_require_subcommand_min() == 0) return std::nullopt;
      std::string names;
      for (const CLI::App* s : subs) names += (names.empty() ? "" : ", ") + s->get_name();
      return path + ": unknown command '" + std::string(word) + "'; the commands are: " + names + " (" +
             path + " --help)\n";
    }
    path += " " + next->get_name();
    at = next;
  }
  return std::nullopt;
}

}  // namespace qim::ctl
