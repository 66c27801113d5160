// The fake's driver table (table.cpp).
#pragma once

#include "fake_driver.hpp"

namespace fake::detail {

// Fills table() with the fake's entry points (undoing a test's edits).
void build_table();
// The entry point `name` of table(), or null when the fake has none.
void *find_entry_point(const char *name);

}  // namespace fake::detail
