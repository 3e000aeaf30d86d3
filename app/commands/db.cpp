// `mlsysbench db ls|show|rm`: the stored runs listed, one shown, some deleted.
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "reports/run_listing.hpp"
#include "reports/store.hpp"

namespace mlsb::cli {

namespace {

struct DbArgs {
  int ls_limit = 20;
  std::string show_ref = "latest";
  std::vector<std::string> rm_refs;
  bool rm_force = false;
  std::string mark_ref, suspect;
  bool clear = false;
};

int db_ls(const DbArgs& args, const Globals& globals) {
  reports::Store store(globals.db, /*read_only=*/true);
  std::cout << reports::format_run_list(store.list_run_summaries(args.ls_limit));
  return 0;
}

int db_show(const DbArgs& args, const Globals& globals) {
  reports::Store store(globals.db, /*read_only=*/true);
  std::cout << reports::format_run_detail(store.load_run(resolve(store, args.show_ref)));
  return 0;
}

int db_rm(const DbArgs& args, const Globals& globals) {
  reports::Store store(globals.db);
  std::vector<int64_t> ids;
  for (const auto& ref : args.rm_refs) ids.push_back(resolve(store, ref));  // all resolve, or none is deleted
  for (const int64_t id : ids)
    if (!args.rm_force && store.load_run(id).run.status == reports::RunStatus::Running)
      throw std::invalid_argument("run " + std::to_string(id) +
                                  " is still running (or its process died): use --force to delete it");
  for (const int64_t id : ids) {
    store.delete_run(id);
    std::printf("deleted run %lld\n", static_cast<long long>(id));
  }
  return 0;
}

int db_mark(const DbArgs& args, const Globals& globals) {
  if (args.clear == !args.suspect.empty())
    throw std::invalid_argument("db mark: give either --suspect REASON or --clear");
  reports::Store store(globals.db);
  const int64_t id = resolve(store, args.mark_ref);
  store.mark_suspect(id, args.suspect);
  std::printf("run %lld %s\n", static_cast<long long>(id), args.clear ? "is no longer suspect" : "marked suspect");
  return 0;
}

}  // namespace

Command add_db_command(CLI::App& app) {
  auto args = std::make_shared<DbArgs>();
  auto* dbcmd = app.add_subcommand("db", "inspect the results store");
  dbcmd->require_subcommand(1);
  auto* ls = dbcmd->add_subcommand("ls", "list runs, newest first");
  ls->add_option("-n,--limit", args->ls_limit, "at most this many runs (0 = all; default 20)");
  auto* show = dbcmd->add_subcommand("show", "show one run: metadata, environment and cases");
  show->add_option("run", args->show_ref, "run id, uuid, tag or latest");
  auto* rm = dbcmd->add_subcommand("rm", "delete runs and everything recorded under them");
  rm->add_option("runs", args->rm_refs, "run ids, uuids or tags")->required();
  rm->add_flag("--force", args->rm_force, "also delete runs still marked running (e.g. left by a killed process)");
  auto* mark = dbcmd->add_subcommand(
      "mark", "mark a run suspect (kept and shown, never a reference for the gate), or clear the mark");
  mark->add_option("run", args->mark_ref, "run id, uuid or tag")->required();
  mark->add_option("--suspect", args->suspect, "why the run is suspect (e.g. the confirming re-run was not worse)");
  mark->add_flag("--clear", args->clear, "the run is a reference again");
  return {dbcmd,
          [args, ls, show, mark](const Globals& globals) {
            if (*ls) return db_ls(*args, globals);
            if (*show) return db_show(*args, globals);
            if (*mark) return db_mark(*args, globals);
            return db_rm(*args, globals);
          },
          {}};
}

}  // namespace mlsb::cli
