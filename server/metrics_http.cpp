#include "server/metrics_http.h"

#include <array>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "server/metrics.h"

namespace warden::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// After the last answer, what the client still sends is read and dropped (so that closing does
// not reset the connection before the client has read the answer), up to this much.
constexpr std::size_t kMaxDrainBytes = 1024 * 1024;

std::string_view view(beast::string_view s) { return {s.data(), s.size()}; }

bool is_http_error(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

}  // namespace

class MetricsServer::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<MetricsServer> server)
      : stream_(std::move(socket)), server_(std::move(server)) {
    server_->open_.insert(this);
  }
  ~Connection() { server_->open_.erase(this); }

  void start() { read(); }

  void close() {
    if (closed_) return;
    closed_ = true;
    stream_.close();
  }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(0);  // GET has no body
    stream_.expires_after(server_->config_.timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (closed_) return;
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      answer(http::status::request_header_fields_too_large, "text/plain; charset=utf-8",
             "request line and headers over 8 KiB\n", false);
      return;
    }
    if (ec == http::error::body_limit || ec == http::error::unexpected_body) {
      answer(http::status::bad_request, "text/plain; charset=utf-8", "a request here has no body\n",
             false);
      return;
    }
    if (ec && is_http_error(ec) && ec != http::error::end_of_stream &&
        ec != http::error::partial_message) {
      answer(http::status::bad_request, "text/plain; charset=utf-8", "malformed request\n", false);
      return;
    }
    if (ec) {
      // The client went away, was too slow (timeout), or the listener stopped.
      close();
      return;
    }
    const auto& request = parser_->get();
    if (static_cast<std::size_t>(std::distance(request.begin(), request.end())) >
        kMaxHeaderFields) {
      answer(http::status::request_header_fields_too_large, "text/plain; charset=utf-8",
             "more than 64 header fields\n", false);
      return;
    }
    const bool keep_alive = request.keep_alive();
    version_ = request.version();
    std::string_view target = view(request.target());
    target = target.substr(0, target.find('?'));
    const bool metrics = target == "/metrics";
    const bool health = target == "/health";
    if (!metrics && !health) {
      answer(http::status::not_found, "text/plain; charset=utf-8",
             "not found: GET /metrics or GET /health\n", keep_alive);
      return;
    }
    if (request.method() != http::verb::get) {
      answer(http::status::method_not_allowed, "text/plain; charset=utf-8", "only GET\n",
             keep_alive);
      return;
    }
    if (metrics) {
      answer(http::status::ok, kMetricsContentType, metrics_text(server_->context_), keep_alive);
      return;
    }
    HealthReport report = health_report(server_->context_);
    answer(report.ok ? http::status::ok : http::status::service_unavailable, "application/json",
           report.body + "\n", keep_alive);
  }

  void answer(http::status status, const char* content_type, std::string body, bool keep_alive) {
    response_ = http::response<http::string_body>();
    response_.version(version_);
    response_.result(status);
    response_.set(http::field::server, "warden");
    response_.set(http::field::content_type, content_type);
    response_.set(http::field::cache_control, "no-store");
    if (status == http::status::method_not_allowed) response_.set(http::field::allow, "GET");
    response_.keep_alive(keep_alive);
    response_.body() = std::move(body);
    response_.prepare_payload();
    Stats& stats = server_->context_.stats;
    Stats::add(stats.http_responses[Stats::http_status_index(static_cast<unsigned>(status))]);
    stream_.expires_after(server_->config_.timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                        if (self->closed_) return;
                        if (ec) {
                          self->close();
                        } else if (keep_alive) {
                          self->read();
                        } else {
                          self->finish();
                        }
                      });
  }

  // No more answers on this connection: our side is shut, what the client still sends is
  // read until it closes (bounded in bytes and by the timeout), then the socket is closed.
  void finish() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) {
      close();
      return;
    }
    drain();
  }

  void drain() {
    stream_.expires_after(server_->config_.timeout);
    stream_.async_read_some(asio::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kMaxDrainBytes) {
                                self->close();
                                return;
                              }
                              self->drain();
                            });
  }

  beast::tcp_stream stream_;
  std::shared_ptr<MetricsServer> server_;
  beast::flat_buffer buffer_{kMaxHeaderBytes + 1024};
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> response_;
  unsigned version_ = 11;
  std::array<char, 4096> scratch_{};
  std::size_t drained_ = 0;
  bool closed_ = false;
};

MetricsServer::MetricsServer(asio::io_context& io, ServerContext& context,
                             const MetricsConfig& config)
    : context_(context), config_(config), acceptor_(io), retry_timer_(io) {}

MetricsServer::~MetricsServer() = default;

std::string MetricsServer::open(const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return "metrics.listen: cannot listen on " + endpoint.address().to_string() + ":" +
           std::to_string(endpoint.port()) + ": " + ec.message();
  }
  return {};
}

MetricsServer::tcp::endpoint MetricsServer::local_endpoint() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void MetricsServer::start() { do_accept(); }

void MetricsServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  retry_timer_.cancel();
  // close() only cancels: each connection leaves open_ when its last handler has run.
  std::vector<Connection*> open(open_.begin(), open_.end());
  for (Connection* c : open) c->close();
}

void MetricsServer::do_accept() {
  if (stopped_) return;
  acceptor_.async_accept(
      [self = shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
        self->on_accept(ec, std::move(socket));
      });
}

void MetricsServer::on_accept(boost::system::error_code ec, tcp::socket socket) {
  if (stopped_ || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors or the like: try again shortly rather than spin.
    context_.log->debug("metrics: accept failed: {}", ec.message());
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code e) {
      if (!e) self->do_accept();
    });
    return;
  }
  if (open_.size() >= config_.max_connections) {
    Stats::add(context_.stats.http_refused);
    boost::system::error_code ignored;
    socket.close(ignored);
  } else {
    std::make_shared<Connection>(std::move(socket), shared_from_this())->start();
  }
  do_accept();
}

}  // namespace warden::server
