// qim-history-check FILE...: checks recorded client histories (checker/checker.h) and prints the report.
// Exit 0: no violation; 1: a violation (each printed with the events that show it); 2: a file could not
// be read or is not a history (the error names the file and line).
#include <iostream>

#include "checker/checker.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help") {
    std::cerr << "usage: qim-history-check FILE...\n"
                 "  checks each history file written by an e2e or nemesis run (src/checker/checker.h)\n";
    return 2;
  }
  int rc = 0;
  for (int i = 1; i < argc; ++i) {
    auto events = qim::checker::load_history(argv[i]);
    if (!events.ok()) {
      std::cerr << "qim-history-check: " << events.error().to_string() << "\n";
      return 2;
    }
    auto report = qim::checker::check_history(*events);
    std::cout << argv[i] << ": " << report.to_string();
    if (!report.ok()) rc = 1;
  }
  return rc;
}
