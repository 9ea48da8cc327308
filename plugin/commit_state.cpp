#include "commit_state.hpp"

#include <algorithm>
#include <iterator>

namespace pixelport {

namespace {

using S = CommitState;

// clang-format off
constexpr CommitEdge kEdges[] = {
	{S::New, S::Due, "a small update of the surface's own image within the main thread's allowance; stream bytes still arriving; a second image over the budget; no worker"},
	{S::New, S::Ready, "the same content was converted already for another surface"},
	{S::New, S::Converting, "no job runs for the surface: one starts, or it joins the job converting the same content"},
	{S::New, S::Waiting, "the surface's job runs: this one starts when it ends"},
	{S::New, S::Superseded, "no image within the budgets, or pixels that cannot be read"},
	{S::Waiting, S::Converting, "the surface's job ended: its own starts"},
	{S::Waiting, S::Ready, "its turn came and the same content was converted already; or it applied first and was converted on the main thread"},
	{S::Waiting, S::Superseded, "a newer commit, a native buffer or a null attach replaced it; no image when its turn came; its surface went"},
	{S::Converting, S::Ready, "its job was handed back with every row; or it applied first and its job was finished on the main thread"},
	{S::Converting, S::Superseded, "its job failed, or was dropped (a native buffer, a null attach, its surface gone)"},
	{S::Due, S::Ready, "converted on the main thread, after its apply or when first read"},
	{S::Due, S::Superseded, "replaced before it was converted; no image within the budgets; pixels that cannot be read"},
	{S::Superseded, S::Ready, "it showed after all, a lock not the plugin's having kept the commit that replaced it back: converted on the main thread"},
};
// clang-format on

} // namespace

std::span<const CommitEdge> commit_edges() { return kEdges; }

bool commit_edge_allowed(CommitState from, CommitState to) {
	return std::any_of(std::begin(kEdges), std::end(kEdges),
		[&](const CommitEdge &e) { return e.from == from && e.to == to; });
}

const char *commit_state_name(CommitState state) {
	switch (state) {
	case S::New: return "New";
	case S::Due: return "Due";
	case S::Waiting: return "Waiting";
	case S::Converting: return "Converting";
	case S::Ready: return "Ready";
	case S::Superseded: return "Superseded";
	}
	return "?";
}

} // namespace pixelport
