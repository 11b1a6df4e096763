// Subcommand entry points of the `gpuplane` binary. Each registers its flags on a CLI11 app
// and returns the process exit code: 0 success, 1 problems found in the input, 2 usage errors.
#ifndef GPUPLANE_CLI_COMMANDS_H_
#define GPUPLANE_CLI_COMMANDS_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace gpuplane::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitProblems = 1;
inline constexpr int kExitUsage = 2;

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

}  // namespace gpuplane::cli

#endif  // GPUPLANE_CLI_COMMANDS_H_
