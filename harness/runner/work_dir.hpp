#pragma once
// Case work folders: one per case, "mlsb-case-<pid>-XXXXXX" in the temp folder (the pid tells a live
// run's folder from one a killed run left behind). Internal to the runner.
#include <filesystem>

namespace mlsb::runner {

/// Creates a fresh work folder for a case; throws std::runtime_error naming the folder when it cannot.
std::filesystem::path make_case_work_dir();

/// Removes the case folders that runs of processes now gone left in the temp folder (a run killed with
/// SIGKILL or by the OOM killer never removes its own). Folders of live processes are left alone; errors
/// are ignored.
void remove_dead_case_work_dirs();

}  // namespace mlsb::runner
