// Nothing a client hands over keeps it alive, whatever it makes is capped per client, and what
// it made goes within a second of its exit in time linear in how much it made
// (docs/design.md, "Limits and fairness").
#include <gtest/gtest.h>

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness.hpp"
#include "pixelport-stream-v1-client-protocol.h"
#include <wayland-client-protocol.h>

using namespace pixelport::test;

namespace {

std::string hostile() { return build_path("PIXELPORT_HOSTILE_CLIENT"); }

// ---- fds that would keep their own client alive ------------------------------------------------

class LifetimeOwnConnection : public testing::TestWithParam<const char *> {};

// The client shows a 4096x4096 NV12 frame (a 64 MiB converted image), hands over a data fd
// whose other end is its own connection (or the compositor), gets invalid_fd and exits: the
// compositor sees it go and frees everything within 1 s.
TEST_P(LifetimeOwnConnection, IsInvalidFdAndTheClientStillGoes) {
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start());
	Process client;
	ASSERT_TRUE(client.start({hostile(), GetParam()}, a.fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 30000)) << client.err();
	EXPECT_EQ(line, "shown");
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, "error " + std::to_string(PP_STREAM_MANAGER_V1_ERROR_INVALID_FD) + " pp_stream_manager_v1");
	EXPECT_EQ(client.wait(5000), 0);
	ProbeStats during;
	a.expect_probe_served(&during, a.quiet_baseline("stock wlroots has no pixelport stream to hand the fd to"));
	a.expect_back_to_baseline();
	a.print(GetParam(), during);
}

INSTANTIATE_TEST_SUITE_P(Lifetime, LifetimeOwnConnection,
	testing::Values("stream-own-connection-fd", "stream-display-socket-fd", "stream-fd-carrying-own-connection"),
	[](const auto &info) {
		std::string name = info.param;
		std::replace(name.begin(), name.end(), '-', '_');
		return name;
	});

// A socket that is clean when handed over cannot carry the connection in later: the kernel
// refuses the fd (SO_PASSRIGHTS), and the client's exit is seen.
TEST(LifetimeOwnConnectionLater, TheKernelRefusesItAndTheClientStillGoes) {
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start());
	Process client;
	ASSERT_TRUE(client.start({hostile(), "stream-fd-own-connection-sent-later"}, a.fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, "refused");
	ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
	EXPECT_EQ(line, "ok");
	EXPECT_EQ(client.wait(5000), 0);
	ProbeStats during;
	a.expect_probe_served(&during, a.quiet_baseline("stock wlroots has no pixelport stream to hand the fd to"));
	a.expect_back_to_baseline();
}

TEST(LifetimePoolFd, DevZeroIsInvalidFd) {
	expect_protocol_error(hostile(), ErrorCase{"pool-dev-zero", WL_SHM_ERROR_INVALID_FD, "wl_shm"});
}

// ---- pools grown without end -------------------------------------------------------------------

// One pool grown by one byte 20,000 times, a 1x1 buffer made after each growth and kept, one
// commit, exit: the pool keeps one mapping, the probe is served, nothing stays.
TEST(LifetimePoolGrowth, TwentyThousandGrowthsKeepOneMappingAndLeaveNothing) {
	const LatencyBaseline stock = stock_probe_baseline("the same 20,000 growths", [](AttackArena &s) {
		std::string out, err;
		EXPECT_EQ(s.fx.run_client({hostile(), "pool-grow-storm", "20000"}, 60000, &out, &err), 0) << err;
	});
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start());
	// A small storm first: a thread's first allocation makes its malloc arena (one mapping
	// for good), which is no mapping the attack leaves.
	std::string out, err;
	ASSERT_EQ(a.fx.run_client({hostile(), "pool-grow-storm", "100"}, 10000, &out, &err), 0) << err;
	// That client torn down: its connection closed, the event loop idle again.
	settle_at_most(count_fds, a.pid, a.fds0, 3000);
	wait_main_thread_idle(a.pid);
	a.fds0 = count_fds(a.pid);
	size_t maps0 = count_maps(a.pid);
	Process client;
	ASSERT_TRUE(client.start({hostile(), "pool-grow-storm", "20000"}, a.fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 60000)) << client.err();
	EXPECT_EQ(line, "ok");
	EXPECT_EQ(client.wait(5000), 0);
	ProbeStats during;
	a.expect_probe_served(&during, stock);
	a.expect_back_to_baseline();
	EXPECT_LE(settle_at_most(count_maps, a.pid, maps0 + kMapsSlack, AttackArena::kSettleMs), maps0 + kMapsSlack);
	a.print("pool-grow-storm", during);
}

// Each growth's buffer committed and shown: 3,000 mappings over the client's life, more than
// its cap of 2,048, but only the few a renderer reads at once are alive: no error.
TEST(LifetimePoolGrowth, CommittingEachGrowthsBufferStaysUnderTheMappingCap) {
	const LatencyBaseline stock = stock_probe_baseline("the same 3,000 growths committed", [](AttackArena &s) {
		std::string out, err;
		EXPECT_EQ(s.fx.run_client({hostile(), "pool-grow-commit", "3000"}, 60000, &out, &err), 0) << err;
	});
	AttackArena a;
	ASSERT_NO_FATAL_FAILURE(a.start());
	Process client;
	ASSERT_TRUE(client.start({hostile(), "pool-grow-commit", "3000"}, a.fx.client_env()));
	std::string line;
	ASSERT_TRUE(client.read_line(&line, 60000)) << client.err();
	EXPECT_EQ(line, "ok");
	EXPECT_EQ(client.wait(5000), 0);
	ProbeStats during;
	a.expect_probe_served(&during, stock);
	a.expect_back_to_baseline();
}

// ---- caps --------------------------------------------------------------------------------------

struct CapCase {
	const char *mode;
	long cap; // the default
};

class LifetimeCap : public testing::TestWithParam<CapCase> {};

// At the default cap the objects are made; one more is wl_display.no_memory, and the
// compositor serves others.
TEST_P(LifetimeCap, OneMoreThanTheCapIsNoMemory) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	{
		Process client;
		ASSERT_TRUE(
			client.start({hostile(), GetParam().mode, std::to_string(GetParam().cap)}, fx.client_env()));
		std::string line;
		ASSERT_TRUE(client.read_line(&line, 60000)) << client.err();
		EXPECT_EQ(line, "made " + std::to_string(GetParam().cap));
		client.terminate();
	}
	std::string out, err;
	EXPECT_EQ(fx.run_client({hostile(), GetParam().mode, std::to_string(GetParam().cap + 1)}, 60000, &out, &err), 0)
		<< err;
	// libwayland reports wl_display.error no_memory to the client as ENOMEM.
	EXPECT_EQ(out, "disconnected Cannot allocate memory\n");
	expect_compositor_serves_others(fx);
}

INSTANTIATE_TEST_SUITE_P(Lifetime, LifetimeCap,
	testing::Values(CapCase{"many-pools", 1024}, CapCase{"many-buffers", 65536},
		CapCase{"many-color-surfaces", 4096}, CapCase{"many-images", 4096}),
	[](const auto &info) {
		std::string name = info.param.mode;
		std::replace(name.begin(), name.end(), '-', '_');
		return name;
	});

// ---- teardown linear in what a client made -----------------------------------------------------

struct ScaleCase {
	const char *mode;
	std::vector<std::string> cap_flags; // raised to the largest n
	long n[3];
};

class LifetimeTeardown : public testing::TestWithParam<ScaleCase> {};

// A client holding N objects is killed; the compositor's main-thread CPU time from the kill
// until its connection and pools are closed is what the teardown cost the loop (immune to
// other processes' load, unlike wall time). Ten times the objects may cost at most twenty times
// as much (quadratic bookkeeping costs a hundred); under 2 ms is noise and counts as 2 ms.
TEST_P(LifetimeTeardown, GrowsLinearlyWithTheObjects) {
	const ScaleCase &c = GetParam();
	std::vector<std::string> args;
	for (const std::string &flag : c.cap_flags) {
		args.push_back(flag);
		args.push_back(std::to_string(c.n[2] + 1));
	}
	CompositorFixture fx;
	ASSERT_TRUE(fx.start(args));
	expect_compositor_serves_others(fx);
	pid_t pid = fx.compositor().pid();
	uint64_t cpu_us[3] = {};
	for (int i = 0; i < 3; i++) {
		size_t fds0 = count_fds(pid);
		Process client;
		ASSERT_TRUE(client.start({hostile(), c.mode, std::to_string(c.n[i])}, fx.client_env()));
		std::string line;
		ASSERT_TRUE(client.read_line(&line, 120000)) << client.err();
		ASSERT_EQ(line, "made " + std::to_string(c.n[i]));
		ASSERT_TRUE(client.read_line(&line, 5000));
		ASSERT_EQ(line, "holding");
		// The compositor idle again: its event loop's CPU time stops advancing.
		wait_main_thread_idle(pid);
		uint64_t cpu0 = main_thread_cpu_ns(pid);
		kill(-client.pid(), SIGKILL);
		ASSERT_LE(settle_at_most(count_fds, pid, fds0, 10000), fds0) << "not torn down in 10 s";
		cpu_us[i] = (main_thread_cpu_ns(pid) - cpu0) / 1000;
		client.wait(5000);
		printf("teardown %s n=%ld cpu_us=%llu\n", c.mode, c.n[i], static_cast<unsigned long long>(cpu_us[i]));
	}
	fflush(stdout);
	constexpr uint64_t kFloorUs = 2000;
	for (int i = 1; i < 3; i++) {
		EXPECT_LE(cpu_us[i], 20 * std::max(cpu_us[i - 1], kFloorUs))
			<< c.mode << ": " << c.n[i] << " objects took " << cpu_us[i] << " us of CPU, " << c.n[i - 1]
			<< " took " << cpu_us[i - 1] << " us";
	}
	expect_compositor_serves_others(fx);
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

INSTANTIATE_TEST_SUITE_P(Lifetime, LifetimeTeardown,
	testing::Values(ScaleCase{"many-buffers", {"--client-max-shm-buffers"}, {1000, 10000, 100000}},
		ScaleCase{"many-pools", {"--client-max-pools", "--client-max-mappings"}, {150, 1500, 15000}},
		ScaleCase{"many-color-surfaces", {"--client-max-color-surfaces"}, {400, 4000, 40000}}),
	[](const auto &info) {
		std::string name = info.param.mode;
		std::replace(name.begin(), name.end(), '-', '_');
		return name;
	});

} // namespace
