#include "mcp/tool_server/http_server.hpp"

#include <httplib.h>

#include <mutex>
#include <set>
#include <thread>

#include "util/json_parse.hpp"
#include "util/uuid.hpp"
#include "mcp/jsonrpc.hpp"

namespace mlsb::mcp {

using nlohmann::json;

namespace {

bool loopback_origin(const std::string& origin) {
  for (const char* scheme : {"http://", "https://"})
    for (const char* host : {"localhost", "127.0.0.1", "[::1]"}) {
      const std::string base = std::string(scheme) + host;
      if (origin == base || origin.rfind(base + ":", 0) == 0) return true;
    }
  return false;
}

// The Host header's name without its port: "[::1]:8080" -> "[::1]", "localhost:3000" -> "localhost".
std::string host_name(const std::string& host) {
  if (!host.empty() && host[0] == '[') return host.substr(0, host.find(']') + 1);
  return host.substr(0, host.find(':'));
}

// DNS rebinding defence (MCP spec, Streamable HTTP security warning): a browser page on evil.example
// that resolves its name to 127.0.0.1 sends Host: evil.example; only loopback names and the address
// the server is bound to are served.
bool allowed_host(const std::string& host, const std::string& bind_host) {
  const std::string name = host_name(host);
  return name == "localhost" || name == "127.0.0.1" || name == "[::1]" || name == bind_host ||
         name == "[" + bind_host + "]";
}

void json_reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

}  // namespace

int serve_http(ToolServer& server, const HttpServeOptions& options, const std::atomic<bool>& stop) {
  httplib::Server http;
  std::mutex mu;
  std::set<std::string> sessions;
  const auto session_known = [&](const std::string& id) {
    std::lock_guard lock(mu);
    return sessions.count(id) > 0;
  };
  // The checks every method shares, made on the headers before any body is read (a refused request
  // costs no memory); false when `res` already holds the refusal.
  const auto admitted = [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Origin") && !loopback_origin(req.get_header_value("Origin"))) {
      json_reply(res, 403, jsonrpc::error(nullptr, jsonrpc::kInvalidRequest, "Origin not allowed"));
      return false;
    }
    if (req.has_header("Host") && !allowed_host(req.get_header_value("Host"), options.host)) {
      json_reply(res, 403, jsonrpc::error(nullptr, jsonrpc::kInvalidRequest, "Host not allowed"));
      return false;
    }
    if (req.has_header("MCP-Protocol-Version") && !ToolServer::supports(req.get_header_value("MCP-Protocol-Version"))) {
      json_reply(res, 400, jsonrpc::error(nullptr, jsonrpc::kInvalidRequest,
                                          "unsupported MCP-Protocol-Version " + req.get_header_value("MCP-Protocol-Version")));
      return false;
    }
    return true;
  };
  http.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    return admitted(req, res) ? httplib::Server::HandlerResponse::Unhandled : httplib::Server::HandlerResponse::Handled;
  });
  http.set_payload_max_length(options.max_body_bytes);  // larger: 413, refused on its Content-Length
  http.set_error_handler([&](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413)
      json_reply(res, 413, jsonrpc::error(nullptr, jsonrpc::kInvalidRequest,
                                          "request body over " + std::to_string(options.max_body_bytes) + " bytes"));
  });
  http.Post(options.path, [&](const httplib::Request& req, httplib::Response& res) {
    std::string problem;
    const auto message = jsonrpc::parse_message(req.body, problem);
    if (!message) {
      json_reply(res, 400, jsonrpc::error(nullptr, jsonrpc::kParseError, "Parse error: the body " + problem));
      return;
    }
    const bool initialize = message->is_object() && message->value("method", json()) == "initialize";
    const std::string session = req.get_header_value("Mcp-Session-Id");
    if (!initialize) {
      if (session.empty()) {
        json_reply(res, 400, jsonrpc::error(nullptr, jsonrpc::kInvalidRequest, "missing Mcp-Session-Id"));
        return;
      }
      if (!session_known(session)) {
        json_reply(res, 404, jsonrpc::error(nullptr, jsonrpc::kInvalidRequest, "unknown or ended session"));
        return;
      }
    }
    const auto reply = server.handle(*message);
    if (!reply) {
      res.status = 202;
      return;
    }
    if (initialize && reply->contains("result")) {
      const std::string id = random_uuid();
      {
        std::lock_guard lock(mu);
        sessions.insert(id);
      }
      res.set_header("Mcp-Session-Id", id);
    }
    json_reply(res, 200, *reply);
  });
  http.Get(options.path, [&](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "POST, DELETE");
  });
  http.Delete(options.path, [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    res.status = sessions.erase(req.get_header_value("Mcp-Session-Id")) ? 200 : 404;
  });
  const int port = options.port == 0 ? http.bind_to_any_port(options.host) : (http.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) throw std::runtime_error("cannot listen on " + options.host + ":" + std::to_string(options.port));
  std::thread listener([&] { http.listen_after_bind(); });
  if (options.on_listening) options.on_listening("http://" + options.host + ":" + std::to_string(port) + options.path);
  while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  http.stop();
  listener.join();
  return 0;
}

}  // namespace mlsb::mcp
