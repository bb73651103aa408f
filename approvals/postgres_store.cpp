#include "approvals/store.h"
namespace warden::approvals {
std::unique_ptr<Store> open_postgres(const std::string&) { throw StoreError("approval store (postgres): not built yet"); }
}
