// atracectl's verbs: each a short function over named steps (options, gather, classify or
// draw, print), dispatched by Main (cli.cc).
#pragma once

#include "common/command_line.h"

namespace atracectl {

int Main(int argc, char** argv);

int RunEmit(const Globals& g, const Args& args);
int RunStatus(const Globals& g, const Args& args);
int RunList(const Globals& g, const Args& args);
// list --live (cmd_list_live.cc): RunList hands it the parsed options.
int RunListLive(const Globals& g, const boost::program_options::variables_map& vm);
int RunDu(const Globals& g, const Args& args);
int RunVacuum(const Globals& g, const Args& args);
int RunShow(const Globals& g, const Args& args);
int RunInfo(const Globals& g, const Args& args);
int RunExport(const Globals& g, const Args& args);
int RunDump(const Globals& g, const Args& args);
int RunMerge(const Globals& g, const Args& args);
int RunHang(const Globals& g, const Args& args);
// hang --journal DIR (cmd_hang_journal.cc); RunHang hands it over.
int RunHangJournal(const Globals& g, const Args& args);
// The journal form's options, which `hang --help` lists beside the bundle form's.
boost::program_options::options_description HangJournalOptions();

}  // namespace atracectl
