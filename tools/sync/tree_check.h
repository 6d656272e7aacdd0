#ifndef FLEETPLAN_TOOLS_SYNC_TREE_CHECK_H_
#define FLEETPLAN_TOOLS_SYNC_TREE_CHECK_H_

// The tree check at the end of a sync, made cheap to repeat (stat_record.h): after a check
// that passed, the agent records each file's inode, size, mode and change
// times beside the manifest. The next check reads again only the files
// whose record differs (edited, replaced, touched) or whose change time is
// too close to the record's to tell (as git's index does with racy
// entries); the others are as they were when their bytes were last read
// and matched. An edit loop then rehashes the edited files, not the tree.

#include <string>
#include <vector>

#include "tools/sync/manifest.h"

namespace fleetplan {

// The paths of `manifest` that the tree under `root` does not hold as
// listed (FindTreeMismatches), using and then rewriting the record at
// `record_path` (empty: no record; every file is read).
std::vector<std::string> CheckTree(const std::string& root, const Manifest& manifest,
                                   const std::string& record_path);

// Where the record of a tree checked against the manifest at
// `manifest_path` lives: beside it.
std::string CheckRecordPath(const std::string& manifest_path);

}  // namespace fleetplan

#endif  // FLEETPLAN_TOOLS_SYNC_TREE_CHECK_H_
