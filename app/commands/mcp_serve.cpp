// `mlsysbench mcp-serve`: the harness's MCP tools (app/mcp_serve.hpp) served over stdio or Streamable HTTP
// until a signal.
#include "app/mcp_serve.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "harness/suite.hpp"
#include "mcp/tool_server/http_server.hpp"
#include "mcp/tool_server/stdio_server.hpp"

namespace mlsb::cli {

namespace {

struct ServeArgs {
  bool http = false;
  std::string host = "127.0.0.1";
  int port = 0;
};

int run_mcp_serve(const ServeArgs& args, const Globals& globals) {
  const auto suite_dirs = default_suite_dirs();
  catch_signals();
  mcp::ToolServer server("mlsysbench", MLSB_VERSION, harness_tools(globals.db, suite_dirs, interrupted));
  if (!args.http) return mcp::serve_stdio(server, interrupted);
  mcp::HttpServeOptions http;
  http.host = args.host;
  http.port = args.port;
  http.on_listening = [&](const std::string& url) {
    std::fprintf(stderr, "mlsysbench mcp-serve: listening on %s (store %s)\n", url.c_str(), globals.db.c_str());
  };
  return mcp::serve_http(server, http, interrupted);
}

}  // namespace

Command add_mcp_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* serve = app.add_subcommand("mcp-serve",
                                   "serve the harness as MCP tools (list, run, report, compare) "
                                   "over stdio, or Streamable HTTP with --http");
  serve->add_flag("--http", args->http, "Streamable HTTP at http://HOST:PORT/mcp instead of stdio");
  serve->add_option("--host", args->host, "address to bind with --http (default 127.0.0.1)");
  serve->add_option("--port", args->port, "port with --http (default 0: any free port, printed on stderr)")
      ->check(CLI::Range(0, 65535));
  return {serve, [args](const Globals& globals) { return run_mcp_serve(*args, globals); }, {}};
}

}  // namespace mlsb::cli
