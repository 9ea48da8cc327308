// What each client holds of the plugin's objects, and the per-client caps on them
// (docs/design.md, "Limits and fairness"). Any unprivileged client can reach the plugin's
// globals; without a cap, one of them could make the compositor hold objects without end
// (fds, mappings, a subscription's buffer) and make every teardown or lookup slower.
//
// One account per wl_client, the one record the plugin keeps of a client: made at its first
// counted object or bind, and found through the plugin's one destroy listener on the client
// (wl_client_get_destroy_listener: the libwayland idiom, a walk of the client's few destroy
// listeners). Objects that may outlive their client (a mapping a renderer's texture still
// reads, a buffer wlroots still locks) keep the account alive through their AccountSlot, so
// giving one back never touches freed memory.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "wlr.hpp"

struct pixelport_options;

namespace pixelport {

/** The kinds of objects counted per client. */
enum class ClientObject : uint8_t {
	ShmPool, // wl_shm_pool (each holds the client's fd)
	ShmMapping, // an mmap of a pool: the current one, and older ones still read by a renderer
	ShmBuffer, // wl_buffer made from a pool
	TimingSubscription, // pp_surface_timing_v1
	ColorSurface, // wp_color_representation_surface_v1
	ConvertedImage, // an image a converted commit is shown from (an anonymous mapping each)
	Count,
};

/** The option name and the default of each kind's cap; the cap is pixelport_options' field. */
const char *client_object_name(ClientObject kind);
uint32_t client_object_default_cap(ClientObject kind);
/** The cap in force: the plugin's option when set (non-zero; `options` may be null), else the default. */
uint32_t client_object_cap(const pixelport_options *options, ClientObject kind);

/** Bytes of converted images charged to one client, or to the whole plugin (images.cpp). */
struct ImageBudget {
	uint64_t bytes = 0;
	/** Pixels of unheld commits admitted and not yet converted or dropped. */
	uint64_t due_pixels = 0;
	/** Pixels of unheld commits converted since the main loop's last idle pass (`epoch`). */
	uint64_t spent_pixels = 0;
	uint64_t epoch = 0;
};

/** A client's streams and stream buffers, against the stream limits (stream.cpp). */
struct ClientUsage;
/** What wl_shm knows of a client: the formats withheld from it and why (shm.cpp). */
struct ShmClient;

/**
 * Something that must hear of the client's going: a plugin the client bound a global of
 * (pixelport.cpp), which lives until its bound clients are gone.
 */
struct ClientBinding {
	void *owner = nullptr;
	void (*gone)(void *owner, wl_client *client) = nullptr;
};

/**
 * The one record the plugin keeps for a client: the plugins it bound, its objects counted
 * against the caps, its converted images' budget, its stream usage. Found through one destroy
 * listener on the client (client_account()); objects that outlive the client (an image a
 * texture still reads) keep the parts they charge through shared pointers.
 */
struct ClientAccount {
	/** The client's display's loop: what it made is freed after its destroy listeners ran. */
	wl_event_loop *loop = nullptr;
	/** Plugins the client bound a global of, told when it goes (in the order bound). */
	std::vector<ClientBinding> bindings;
	uint32_t live[static_cast<int>(ClientObject::Count)] = {};
	/** Peak of each kind over the client's life (for logs and tests). */
	uint32_t peak[static_cast<int>(ClientObject::Count)] = {};
	/** Its converted images' bytes (made on first use). */
	std::shared_ptr<ImageBudget> images;
	/** Its wl_shm format list's exceptions (made when it binds wl_shm). */
	std::shared_ptr<ShmClient> shm;
	/** Its streams (made when it makes the first), and what ends them when the client goes. */
	std::shared_ptr<ClientUsage> streams;
	void (*end_streams)(ClientAccount *account) = nullptr;
};

/** One counted object: gives its count back when destroyed. Empty (counts nothing) by default. */
class AccountSlot {
public:
	AccountSlot() = default;
	AccountSlot(std::shared_ptr<ClientAccount> account, ClientObject kind);
	AccountSlot(AccountSlot &&other) noexcept = default;
	AccountSlot &operator=(AccountSlot &&other) noexcept;
	AccountSlot(const AccountSlot &) = delete;
	AccountSlot &operator=(const AccountSlot &) = delete;
	~AccountSlot() { reset(); }
	void reset();
	explicit operator bool() const { return account_ != nullptr; }

private:
	std::shared_ptr<ClientAccount> account_;
	ClientObject kind_ = ClientObject::Count;
};

/** The client's account, made on first use. Null only when out of memory. */
std::shared_ptr<ClientAccount> client_account(wl_client *client);
/** The client's account if it has one (nothing is made). */
ClientAccount *client_account_find(wl_client *client);
/**
 * Whether the client is being destroyed: its destroy listeners ran and libwayland destroys its
 * objects now, in any order, while wlroots may apply cached states of its surfaces as their roles
 * go (a subsurface's, as its parent goes); nothing of it will show.
 */
bool client_going(wl_client *client);
/**
 * Tells `binding` when the client goes, once however often it is asked (keyed by its owner).
 * False when out of memory (no_memory was posted).
 */
bool client_account_bind(wl_client *client, ClientBinding binding);
/** `owner` no longer hears of the client (it is going first). */
void client_account_unbind(wl_client *client, const void *owner);

/**
 * Counts one more object of `kind` for `client`. When the client already holds its cap of
 * them, posts a protocol error and returns an empty slot: `error_code` on `error_resource`
 * when given (a protocol of ours has a limit_exceeded error), else wl_display.error no_memory
 * (wl_shm and wp_color_representation have no error for it). The message names the kind and
 * the cap.
 */
AccountSlot client_account_take(const pixelport_options *options, wl_client *client, ClientObject kind,
	wl_resource *error_resource = nullptr, uint32_t error_code = 0);

} // namespace pixelport
