// gpuplane: GPU control plane for Kubernetes. This file only dispatches to subcommands.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "util/suggest.h"

namespace {

constexpr char kVersion[] = "0.1.0";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuplane: DRA-native GPU allocation, scheduling simulation and accounting"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);
  std::vector<gpuplane::cli::Command> commands = {
      gpuplane::cli::AddValidateCommand(app),  gpuplane::cli::AddGenerateCommand(app),
      gpuplane::cli::AddCelCommand(app),       gpuplane::cli::AddAllocateCommand(app),
      gpuplane::cli::AddSimulateCommand(app),  gpuplane::cli::AddAttributeCommand(app),
      gpuplane::cli::AddAgentCommand(app),     gpuplane::cli::AddReportCommand(app),
      gpuplane::cli::AddScheduleCommand(app),  gpuplane::cli::AddExplainCommand(app),
      gpuplane::cli::AddSchedulerCommand(app),
  };
  CLI::App* version = app.add_subcommand("version", "Print the version");
  commands.push_back({version, [] {
                        std::printf("gpuplane %s\n", kVersion);
                        return 0;
                      }});
  if (argc > 1 && argv[1][0] != '-') {  // a command name: say which one was meant
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::fprintf(stderr, "gpuplane: unknown command \"%s\"%s (gpuplane --help lists them)\n",
                   argv[1], gpuplane::util::DidYouMean(argv[1], names).c_str());
      return gpuplane::cli::kExitUsage;
    }
  }
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
