// One function per `grove` subcommand; each parses its own options (argv[0] is the command name)
// and returns the process exit status. Errors are thrown as exceptions and reported by main.
#pragma once

namespace grove {

int command_ic(int argc, char** argv);
int command_info(int argc, char** argv);
int command_forces(int argc, char** argv);
int command_bench(int argc, char** argv);
int command_run(int argc, char** argv);
int command_accuracy(int argc, char** argv);
int command_export(int argc, char** argv);
int command_convert(int argc, char** argv);

} // namespace grove
