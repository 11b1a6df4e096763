// gpuplane: GPU control plane for Kubernetes. This file only dispatches to subcommands.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr char kVersion[] = "0.1.0";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuplane: DRA-native GPU allocation, scheduling simulation and accounting"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);
  std::vector<gpuplane::cli::Command> commands = {
      gpuplane::cli::AddValidateCommand(app), gpuplane::cli::AddGenerateCommand(app),
      gpuplane::cli::AddCelCommand(app),      gpuplane::cli::AddAllocateCommand(app),
      gpuplane::cli::AddSimulateCommand(app), gpuplane::cli::AddAttributeCommand(app),
      gpuplane::cli::AddAgentCommand(app),    gpuplane::cli::AddReportCommand(app),
      gpuplane::cli::AddScheduleCommand(app), gpuplane::cli::AddExplainCommand(app),
  };
  CLI::App* version = app.add_subcommand("version", "Print the version");
  commands.push_back({version, [] {
                        std::printf("gpuplane %s\n", kVersion);
                        return 0;
                      }});
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, version or the error
    return code == 0 ? 0 : gpuplane::cli::kExitUsage;
  }
  for (const gpuplane::cli::Command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return gpuplane::cli::kExitUsage;
}
