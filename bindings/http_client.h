// The hardening every HTTP request of the product's starts from (the HTTP actuator, the model
// providers, the approval notifier): http and https only, redirects refused and not followed,
// never a proxy from the environment, TLS peers and host names verified, no signals (libcurl
// runs in the daemon's threads), an error buffer, and connect and total timeouts. The caller
// adds the URL, the method, the headers, the body, its callbacks and its cap on the answer.
// Thread-safe (global_init runs once; harden touches only the handle it is given).
#pragma once

#include <curl/curl.h>

#include <chrono>

namespace warden::http_client {

// libcurl's global initialisation, once per process.
void global_init();

// Sets the options above on `curl`. `error_buffer` (CURL_ERROR_SIZE bytes) receives libcurl's
// message when a transfer fails; it must outlive the handle's transfers.
void harden(CURL* curl, char* error_buffer, std::chrono::milliseconds connect_timeout,
            std::chrono::milliseconds timeout);

}  // namespace warden::http_client
