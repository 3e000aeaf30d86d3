#pragma once
// Random identifiers: run uuids in the store, session ids of the MCP HTTP server.
#include <string>

namespace mlsb {

/// A random (version 4, RFC 4122) UUID in its 36-character text form, from std::random_device.
std::string random_uuid();

}  // namespace mlsb
