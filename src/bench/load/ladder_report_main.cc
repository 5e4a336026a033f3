// qim-ladder-report: the ladder's Markdown report (ladder_report.h) from qim-load's CSV files.
//   qim-ladder-report results/*.csv > report.md
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bench/load/ladder_report.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: qim-ladder-report FILE.csv...  (qim-load --csv output; Markdown on stdout)\n");
    return 2;
  }
  std::string text;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    if (!in) {
      std::fprintf(stderr, "qim-ladder-report: cannot read %s\n", argv[i]);
      return 1;
    }
    std::ostringstream s;
    s << in.rdbuf();
    text += s.str() + "\n";
  }
  auto rows = qim::load::parse_ladder_csv(text);
  if (!rows.ok()) {
    std::fprintf(stderr, "qim-ladder-report: %s\n", rows.error().message().c_str());
    return 1;
  }
  std::fputs(qim::load::ladder_markdown(*rows).c_str(), stdout);
  return 0;
}
