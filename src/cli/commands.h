// Subcommand entry points of the `gpuplane` binary. Each registers its flags on a CLI11 app
// and returns the process exit code, by the rule in exit_codes.h. The options a command
// parses are owned by its closure; commands run on the main thread only.
#ifndef GPUPLANE_CLI_COMMANDS_H_
#define GPUPLANE_CLI_COMMANDS_H_

#include <functional>

#include "CLI/CLI.hpp"
#include "cli/exit_codes.h"

namespace gpuplane::cli {

// A registered subcommand and the function that runs it after parsing.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};
Command AddValidateCommand(CLI::App& app);
Command AddGenerateCommand(CLI::App& app);
Command AddCelCommand(CLI::App& app);
Command AddAllocateCommand(CLI::App& app);
Command AddScheduleCommand(CLI::App& app);
Command AddExplainCommand(CLI::App& app);
Command AddSimulateCommand(CLI::App& app);
Command AddAttributeCommand(CLI::App& app);
Command AddAgentCommand(CLI::App& app);
Command AddReportCommand(CLI::App& app);
Command AddSchedulerCommand(CLI::App& app);

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_COMMANDS_H_
