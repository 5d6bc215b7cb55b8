// The dashboard's access rules (Note [Dashboard access] in access.cpp). Private to tfdebug::serve.
#pragma once

#include <string>
#include <string_view>

namespace tfdebug::serve::detail {

// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(std::string_view host);
// 32 hex digits from std::random_device.
std::string random_token();
// 16-128 characters of [A-Za-z0-9._~-]: safe in a URL's query as it is.
bool valid_token(std::string_view token);
// Compares in time that depends only on the lengths.
bool same_token(std::string_view given, std::string_view expected);
// Whether a request's Host header names this loopback server: localhost, 127.0.0.1 or [::1],
// with `port` or without one.
bool loopback_host_header(std::string_view host_header, int port);

}  // namespace tfdebug::serve::detail
