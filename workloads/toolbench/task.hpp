#pragma once
// MCPToolBench++ task records and the loader of a task file (a JSON array of records, or one record).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsb::toolbench {

/// A tool offered to the agent: its name, description and JSON-Schema `input_schema`.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json input_schema = nlohmann::json::object();
};

/// One expected call (`function_call_label[i]`). `output` is ignored: it is a placeholder in the data.
struct Label {
  std::string name;                        ///< expected tool
  std::string step;                        ///< "1", "2", ... (order of the calls)
  std::string server;                      ///< `mcp_server`: a key of the servers config
  std::vector<std::string> similar_tools;  ///< other tool names accepted as a tool match (names of
                                           ///< `similar_tools` entries: strings or {"name": ...})
  nlohmann::json input = nlohmann::json::object();  ///< expected arguments

  /// Whether a call of `tool` matches this label: its name or one of `similar_tools`.
  bool accepts(std::string_view tool) const;
};

/// One task record. `server_tools` is `mcp_tools_dict`: server name -> its tool names.
struct Task {
  std::size_t index = 0;  ///< position of the record in its file
  std::string uuid;
  std::string category;
  std::string call_type;
  std::string query;
  std::vector<ToolSpec> tools;
  std::map<std::string, std::vector<std::string>> server_tools;
  std::vector<Label> labels;  ///< in call order: by numeric `step` when all are numbers, else file order

  /// The tool named `name` among `tools`, or nullptr.
  const ToolSpec* find_tool(std::string_view name) const;
};

/// A record that could not be loaded. `problem` names the record index, uuid and field; `message` also
/// the file.
struct RecordError {
  std::size_t index = 0;
  std::string uuid;      ///< "" when the record has none
  std::string category;  ///< "" when the record has none
  std::string field;  ///< JSON path of the offending field, e.g. "function_call_label[0].input"
  std::string problem;  ///< "record N (uuid U): <what is wrong>"
  std::string message;  ///< "<file>: " + problem
};

/// A loaded task file: the good tasks, in file order, and one error per rejected record.
struct Dataset {
  std::filesystem::path path;
  std::vector<Task> tasks;
  std::vector<RecordError> errors;
};

/// Largest task file load_dataset reads.
inline constexpr std::uintmax_t kMaxTaskFileBytes = std::uintmax_t{256} << 20;

/// The file cannot be used at all (not a regular file, unreadable, larger than kMaxTaskFileBytes, not
/// JSON, nested deeper than kMaxJsonDepth, neither an array nor an object). The message names the file
/// and, for a parse error, the byte offset, line and column.
struct DatasetError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Loads a task file: a JSON array of records, or a single record object (a one-record file, as in
/// MCPToolBench++'s samples/). Bad records do not stop the others: each becomes a RecordError.
/// Throws DatasetError when the file as a whole is unusable.
Dataset load_dataset(const std::filesystem::path& path);

/// Parses one record. Throws RecordProblem naming the field on a missing field or wrong type.
struct RecordProblem : std::runtime_error {
  RecordProblem(std::string field, const std::string& what);
  std::string field;
};
Task parse_task(const nlohmann::json& record);

}  // namespace mlsb::toolbench
