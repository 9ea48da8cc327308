#include "client_account.hpp"

#include <algorithm>
#include <iterator>
#include <new>
#include <unordered_set>
#include <utility>

#include "pixelport/pixelport.h"
#include "unmap.hpp"

namespace pixelport {

namespace {

struct KindInfo {
	const char *name;
	uint32_t default_cap;
	uint32_t pixelport_options::*option;
};

// Why these defaults: docs/design.md, "Limits and fairness".
// clang-format off
constexpr KindInfo kKinds[] = {
	{"wl_shm_pool",                        1024,  &pixelport_options::client_max_pools},
	{"wl_shm_pool mapping",                2048,  &pixelport_options::client_max_mappings},
	{"wl_buffer (wl_shm)",                 65536, &pixelport_options::client_max_shm_buffers},
	{"pp_surface_timing_v1",               1024,  &pixelport_options::client_max_subscriptions},
	{"wp_color_representation_surface_v1", 4096,  &pixelport_options::client_max_color_surfaces},
	{"converted image",                    4096,  &pixelport_options::client_max_images},
};
// clang-format on
static_assert(std::size(kKinds) == static_cast<size_t>(ClientObject::Count));

// Clients being destroyed (client_going()): from their destroy listener until the next idle of
// their loop, or until a new client at the same address makes its record.
std::unordered_set<wl_client *> &going_clients() {
	static std::unordered_set<wl_client *> clients;
	return clients;
}

struct AccountLink {
	wl_listener destroy;
	std::shared_ptr<ClientAccount> account;
};

// Clients that made at least this many objects leave enough freed heap to give back.
constexpr uint32_t kTrimObjects = 1024;

void trim_heap(void *) { trim_later(); }

void account_client_destroyed(wl_listener *listener, void *data) {
	AccountLink *link = wl_container_of(listener, link, destroy);
	// Its objects are destroyed after this, and the client freed: forgotten at the next idle.
	going_clients().insert(static_cast<wl_client *>(data));
	if (link->account->loop != nullptr) {
		wl_event_loop_add_idle(
			link->account->loop,
			[](void *client) { going_clients().erase(static_cast<wl_client *>(client)); }, data);
	}
	// The plugins it bound: each may be waiting for its last client to go.
	for (const ClientBinding &b : std::exchange(link->account->bindings, {})) {
		b.gone(b.owner, static_cast<wl_client *>(data));
	}
	uint64_t made = 0;
	for (uint32_t peak : link->account->peak) made += peak;
	// libwayland destroys the client's resources after its destroy listeners: trim after that.
	if (made >= kTrimObjects && link->account->loop != nullptr) {
		wl_event_loop_add_idle(link->account->loop, trim_heap, nullptr);
	}
	// Its streams end with it: fds, event sources, pending writes, windows, held commits.
	if (link->account->end_streams != nullptr) link->account->end_streams(link->account.get());
	wl_list_remove(&link->destroy.link);
	delete link; // objects that outlive the client keep the account through their slots
}

} // namespace

const char *client_object_name(ClientObject kind) { return kKinds[static_cast<int>(kind)].name; }

uint32_t client_object_default_cap(ClientObject kind) { return kKinds[static_cast<int>(kind)].default_cap; }

uint32_t client_object_cap(const pixelport_options *options, ClientObject kind) {
	const KindInfo &info = kKinds[static_cast<int>(kind)];
	uint32_t set = options != nullptr ? options->*info.option : 0;
	return set != 0 ? set : info.default_cap;
}

AccountSlot::AccountSlot(std::shared_ptr<ClientAccount> account, ClientObject kind) :
	account_(std::move(account)), kind_(kind) {
	if (account_ == nullptr) return;
	uint32_t &live = account_->live[static_cast<int>(kind_)];
	live++;
	uint32_t &peak = account_->peak[static_cast<int>(kind_)];
	if (live > peak) peak = live;
}

AccountSlot &AccountSlot::operator=(AccountSlot &&other) noexcept {
	if (this != &other) {
		reset();
		account_ = std::move(other.account_);
		kind_ = other.kind_;
	}
	return *this;
}

void AccountSlot::reset() {
	if (account_ == nullptr) return;
	account_->live[static_cast<int>(kind_)]--;
	account_.reset();
}

std::shared_ptr<ClientAccount> client_account(wl_client *client) {
	if (wl_listener *l = wl_client_get_destroy_listener(client, account_client_destroyed)) {
		AccountLink *link = wl_container_of(l, link, destroy);
		return link->account;
	}
	auto *link = new (std::nothrow) AccountLink();
	if (link == nullptr) return nullptr;
	going_clients().erase(client); // a new client at a freed one's address
	link->account = std::make_shared<ClientAccount>();
	link->account->loop = wl_display_get_event_loop(wl_client_get_display(client));
	link->destroy.notify = account_client_destroyed;
	wl_client_add_destroy_listener(client, &link->destroy);
	return link->account;
}

ClientAccount *client_account_find(wl_client *client) {
	wl_listener *l = wl_client_get_destroy_listener(client, account_client_destroyed);
	if (l == nullptr) return nullptr;
	AccountLink *link = wl_container_of(l, link, destroy);
	return link->account.get();
}

bool client_going(wl_client *client) { return going_clients().contains(client); }

bool client_account_bind(wl_client *client, ClientBinding binding) {
	std::shared_ptr<ClientAccount> account = client_account(client);
	if (account == nullptr) {
		wl_client_post_no_memory(client);
		return false;
	}
	for (const ClientBinding &b : account->bindings) {
		if (b.owner == binding.owner) return true;
	}
	account->bindings.push_back(binding);
	return true;
}

void client_account_unbind(wl_client *client, const void *owner) {
	if (ClientAccount *account = client_account_find(client)) {
		std::erase_if(account->bindings, [owner](const ClientBinding &b) { return b.owner == owner; });
	}
}

AccountSlot client_account_take(const pixelport_options *options, wl_client *client, ClientObject kind,
	wl_resource *error_resource, uint32_t error_code) {
	std::shared_ptr<ClientAccount> account = client_account(client);
	if (account == nullptr) {
		wl_client_post_no_memory(client);
		return {};
	}
	uint32_t cap = client_object_cap(options, kind);
	if (account->live[static_cast<int>(kind)] >= cap) {
		const char *name = client_object_name(kind);
		if (error_resource != nullptr) {
			wl_resource_post_error(error_resource, error_code, "more than %u %s objects", cap, name);
		} else if (wl_resource *display = wl_client_get_object(client, 1)) {
			wl_resource_post_error(
				display, WL_DISPLAY_ERROR_NO_MEMORY, "pixelport: more than %u %s objects", cap, name);
		} else {
			wl_client_post_no_memory(client);
		}
		return {};
	}
	return AccountSlot(std::move(account), kind);
}

} // namespace pixelport
