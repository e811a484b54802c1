// Package testenv holds the helpers tests use to ask for capabilities
// (root, network namespaces, AF_XDP, RDMA, external commands such as curl)
// and to check that a test leaves no goroutines behind.
//
// A missing capability skips the test with a reason, except where .ci/run
// sets the capability's REQUIRE_* variable (REQUIRE_ROOT, REQUIRE_NETNS,
// REQUIRE_XDP, REQUIRE_RDMA): there the capability must exist, and a skip
// would hide a broken test, so the test fails instead.
//
// The package imports nothing from the project (internal/layers enforces
// it), so any package's tests may use it.
package testenv
