// The commit path's table of state moves (plugin/commit_state.cpp) is the one docs/design.md
// prints ("The commit path"): every row of one is a row of the other, in the same order, with
// the same words, and the table itself is sound (every state reachable from New, Ready and
// Superseded the only states a commit may end in besides Due and Waiting's detours).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commit_state.hpp"

namespace {

using pixelport::CommitEdge;
using pixelport::CommitState;

struct Row {
	std::string from, to, when;
};

// The rows between the document's two markers: "| from | to | when |".
std::vector<Row> documented_rows(const std::string &path) {
	std::ifstream in(path);
	EXPECT_TRUE(in.good()) << "cannot read " << path;
	std::vector<Row> rows;
	std::string line;
	bool inside = false;
	const std::regex row(R"re(^\|\s*(\w+)\s*\|\s*(\w+)\s*\|\s*(.*?)\s*\|\s*$)re");
	std::smatch m;
	while (std::getline(in, line)) {
		if (line.find("<!-- commit-state-table -->") != std::string::npos) {
			inside = true;
			continue;
		}
		if (line.find("<!-- /commit-state-table -->") != std::string::npos) break;
		if (!inside || !std::regex_match(line, m, row) || m[1] == "from") continue;
		rows.push_back({m[1], m[2], m[3]});
	}
	return rows;
}

TEST(CommitStateTable, TheDesignDocumentPrintsTheCodesTable) {
	const std::vector<Row> doc = documented_rows(PIXELPORT_DESIGN_MD);
	const auto edges = pixelport::commit_edges();
	ASSERT_EQ(doc.size(), edges.size()) << "docs/design.md and plugin/commit_state.cpp list different moves";
	for (size_t i = 0; i < edges.size(); i++) {
		EXPECT_EQ(doc[i].from, pixelport::commit_state_name(edges[i].from)) << "row " << i + 1;
		EXPECT_EQ(doc[i].to, pixelport::commit_state_name(edges[i].to)) << "row " << i + 1;
		EXPECT_EQ(doc[i].when, edges[i].when) << "row " << i + 1;
	}
}

TEST(CommitStateTable, EveryStateIsReachedAndNoMoveLeavesReady) {
	std::set<CommitState> reached = {CommitState::New};
	for (bool grew = true; grew;) {
		grew = false;
		for (const CommitEdge &e : pixelport::commit_edges()) {
			if (reached.count(e.from) && reached.insert(e.to).second) grew = true;
		}
	}
	for (CommitState s : {CommitState::New, CommitState::Due, CommitState::Waiting, CommitState::Converting,
		     CommitState::Ready, CommitState::Superseded}) {
		EXPECT_TRUE(reached.count(s)) << pixelport::commit_state_name(s) << " is never reached";
		EXPECT_FALSE(pixelport::commit_edge_allowed(s, CommitState::New)) << "back to New";
		EXPECT_FALSE(pixelport::commit_edge_allowed(s, s)) << pixelport::commit_state_name(s) << " to itself";
		EXPECT_FALSE(pixelport::commit_edge_allowed(CommitState::Ready, s)) << "a Ready commit moved";
	}
	// Moves nobody makes are refused.
	EXPECT_FALSE(pixelport::commit_edge_allowed(CommitState::Converting, CommitState::Waiting));
	EXPECT_FALSE(pixelport::commit_edge_allowed(CommitState::Due, CommitState::Converting));
	EXPECT_FALSE(pixelport::commit_edge_allowed(CommitState::Superseded, CommitState::Converting));
	// Each move once.
	std::set<std::pair<CommitState, CommitState>> seen;
	for (const CommitEdge &e : pixelport::commit_edges()) {
		EXPECT_TRUE(seen.insert({e.from, e.to}).second) << pixelport::commit_state_name(e.from) << " -> "
								<< pixelport::commit_state_name(e.to) << " twice";
	}
}

} // namespace
